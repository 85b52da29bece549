/**
 * Node runs a timer set for 0 ms no sooner than 1 ms later. octokit's throttling plugin
 * (bottleneck) yields to the event loop with such a timer about four times a GitHub request, so a
 * scenario play sat idle for seconds (3.4 s of a 9.4 s `hard-kill-mid-job` play, measured with
 * async hooks), and jest's workers waited more than they computed. In the tests a 0 ms timer runs
 * on the loop's next turn (setImmediate) instead: timers that were due together still run in the
 * order they were set, before any timer set for a real delay, and clearTimeout still cancels one.
 * Only the idle millisecond goes; no client is replaced.
 */
class NextTurnTimer {
  constructor(private readonly immediate: NodeJS.Immediate) {}

  cancel(): void {
    clearImmediate(this.immediate);
  }

  ref(): this {
    this.immediate.ref();
    return this;
  }

  unref(): this {
    this.immediate.unref();
    return this;
  }

  hasRef(): boolean {
    return this.immediate.hasRef();
  }
}

export function runZeroDelayTimersOnNextTurn(): void {
  const nodeSetTimeout = globalThis.setTimeout;
  const nodeClearTimeout = globalThis.clearTimeout;
  const setTimeout = (callback: unknown, delay?: number, ...args: unknown[]) => {
    if (typeof callback !== 'function') return nodeSetTimeout(callback as () => void, delay);
    const run = () => void callback(...args);
    return delay === undefined || delay <= 0
      ? new NextTurnTimer(setImmediate(run))
      : nodeSetTimeout(run, delay);
  };
  const clearTimeout = (timer: unknown) => {
    if (timer instanceof NextTurnTimer) timer.cancel();
    else nodeClearTimeout(timer as NodeJS.Timeout);
  };
  globalThis.setTimeout = Object.assign(setTimeout, nodeSetTimeout) as typeof globalThis.setTimeout;
  globalThis.clearTimeout = clearTimeout as typeof globalThis.clearTimeout;
}
