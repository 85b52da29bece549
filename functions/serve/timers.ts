/**
 * serve's timers: the sweep, wake-ups and the Lease's renewals. On the system clock they are
 * setTimeout; in the sandbox they are the scenario's simulated clock (its callbacks are awaited,
 * as the scenario harness awaits a Lambda invocation).
 */
export interface Timers {
  /** Runs `run` after `ms`; the returned function cancels it. */
  after(ms: number, label: string, run: () => void | Promise<void>): () => void;
}

export const systemTimers: Timers = {
  after(ms, _label, run) {
    const timer = setTimeout(() => void run(), ms);
    return () => clearTimeout(timer);
  },
};
