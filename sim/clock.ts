/**
 * One simulated clock for every model in sim/ and for runner-medic's own code under test.
 * Time only moves when the caller advances it; timers fire in time order (ties in the order
 * they were scheduled), so the same seed and the same calls give the same run.
 */

/** Time as the twins read it; runner-medic's own Clock port has the same shape, so it takes this. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export interface TimerHandle {
  readonly id: number;
  readonly at: number;
  readonly label: string;
}

type TimerCallback = () => void | Promise<void>;

interface Timer extends TimerHandle {
  readonly seq: number;
  readonly run: TimerCallback;
}

const DEFAULT_EPOCH = Date.parse('2026-01-05T09:00:00.000Z');

export class SimClock implements Clock {
  private current: number;
  private readonly timers = new Map<number, Timer>();
  /** The pending timers in time order (a binary heap); a cancelled one stays until it surfaces. */
  private readonly queue: Timer[] = [];
  private nextId = 1;

  constructor(startMs: number = DEFAULT_EPOCH) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Schedules `run` at absolute time `atMs` (clamped to now). */
  at(atMs: number, label: string, run: TimerCallback): TimerHandle {
    const id = this.nextId++;
    const timer: Timer = { id, seq: id, at: Math.max(atMs, this.current), label, run };
    this.timers.set(id, timer);
    this.push(timer);
    return timer;
  }

  /** Schedules `run` after `delayMs` of simulated time. */
  after(delayMs: number, label: string, run: TimerCallback): TimerHandle {
    return this.at(this.current + delayMs, label, run);
  }

  cancel(handle: TimerHandle | undefined): void {
    if (handle) this.timers.delete(handle.id);
  }

  /** Time of the earliest pending timer, if any. */
  nextTimerAt(): number | undefined {
    return this.earliest()?.at;
  }

  pendingTimers(): TimerHandle[] {
    return [...this.timers.values()].sort(byTimeThenSeq);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError(`cannot advance the clock by a negative amount: ${ms}`);
    await this.advanceTo(this.current + ms);
  }

  /** Moves time forward to `targetMs`, firing due timers in order; callbacks are awaited. */
  async advanceTo(targetMs: number): Promise<void> {
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > targetMs) break;
      this.timers.delete(next.id);
      this.current = Math.max(this.current, next.at);
      await next.run();
    }
    this.current = Math.max(this.current, targetMs);
  }

  private earliest(): Timer | undefined {
    for (;;) {
      const top = this.queue[0];
      if (!top || this.timers.has(top.id)) return top;
      this.pop();
    }
  }

  private push(timer: Timer): void {
    const q = this.queue;
    q.push(timer);
    for (let i = q.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (byTimeThenSeq(q[i] as Timer, q[parent] as Timer) >= 0) break;
      [q[i], q[parent]] = [q[parent] as Timer, q[i] as Timer];
      i = parent;
    }
  }

  private pop(): void {
    const q = this.queue;
    const last = q.pop();
    if (!last || q.length === 0) return;
    q[0] = last;
    for (let i = 0; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < q.length && byTimeThenSeq(q[left] as Timer, q[least] as Timer) < 0) least = left;
      if (right < q.length && byTimeThenSeq(q[right] as Timer, q[least] as Timer) < 0)
        least = right;
      if (least === i) return;
      [q[i], q[least]] = [q[least] as Timer, q[i] as Timer];
      i = least;
    }
  }
}

function byTimeThenSeq(a: { at: number; id: number }, b: { at: number; id: number }): number {
  return a.at - b.at || a.id - b.id;
}
