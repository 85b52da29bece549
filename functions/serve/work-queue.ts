/**
 * One piece of engine work at a time, in arrival order, as the Lambda deployment's reserved
 * concurrency of one for the sweep does for it: serve's edges (webhooks, informer changes),
 * sweeps and wake-ups never race each other inside one replica. `idle()` resolves when nothing
 * is queued or running (the sandbox waits on it between steps; SIGTERM waits on it to drain).
 */
export class WorkQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;
  private dead = false;
  /** Resolves when the queue is killed: whoever waits on its work stops waiting. */
  private readonly killed: Promise<void>;
  private onKill: () => void = () => undefined;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly onError: (label: string, error: unknown) => void) {
    this.killed = new Promise((resolve) => (this.onKill = resolve));
  }

  /**
   * Queues `work`; the returned promise settles when it has run (never rejects). Work the queue
   * no longer starts because it was closed runs `handBack` instead (serve: to the store).
   */
  push(
    label: string,
    work: () => Promise<unknown>,
    handBack?: () => Promise<unknown>,
  ): Promise<void> {
    if (this.dead) return Promise.resolve();
    if (this.closed)
      return handBack
        ? handBack().then(
            () => undefined,
            (e: unknown) => this.onError(label, e),
          )
        : Promise.resolve();
    this.pending++;
    const run = this.tail.then(async () => {
      try {
        if (this.dead) return;
        if (!this.closed) await work();
        else await handBack?.();
      } catch (error) {
        this.onError(label, error);
      } finally {
        this.pending--;
        if (this.pending === 0) for (const w of this.waiters.splice(0)) w();
      }
    });
    this.tail = run;
    return Promise.race([run, this.killed]);
  }

  size(): number {
    return this.pending;
  }

  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Takes no more work; what is queued but not started is handed back. */
  close(): void {
    this.closed = true;
  }

  /** As a killed process: nothing queued runs, nothing is handed back. */
  kill(): void {
    this.closed = true;
    this.dead = true;
    this.onKill();
  }
}
