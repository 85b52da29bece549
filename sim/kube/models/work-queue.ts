/**
 * A controller work queue on the simulated clock: keys are reconciled after a delay, each key at
 * most once per firing (later adds merge into the pending run), with requeue-after support.
 */
import type { SimClock, TimerHandle } from '../../clock.js';
import { ApiError } from '../api/errors.js';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

export type Reconciler = (key: string) => ReconcileResult | void;

export interface ModelError {
  at: number;
  queue: string;
  key: string;
  message: string;
}

export class WorkQueue {
  private readonly pending = new Map<string, TimerHandle>();

  constructor(
    private readonly clock: SimClock,
    private readonly name: string,
    private readonly defaultDelayMs: number,
    private readonly reconcile: Reconciler,
    private readonly errors: ModelError[],
  ) {}

  add(key: string, delayMs = this.defaultDelayMs): void {
    const at = this.clock.now() + delayMs;
    const existing = this.pending.get(key);
    if (existing && existing.at <= at) return;
    this.clock.cancel(existing);
    this.pending.set(
      key,
      this.clock.at(at, `${this.name}:${key}`, () => this.run(key)),
    );
  }

  private run(key: string): void {
    this.pending.delete(key);
    let result: ReconcileResult | void;
    try {
      result = this.reconcile(key);
    } catch (e) {
      // Controllers retry on API errors (409 conflicts, 404 races) as controller-runtime does.
      this.errors.push({
        at: this.clock.now(),
        queue: this.name,
        key,
        message: e instanceof Error ? e.message : String(e),
      });
      if (e instanceof ApiError) {
        this.add(key, 1_000);
        return;
      }
      throw e;
    }
    if (result?.requeueAfterMs !== undefined) this.add(key, result.requeueAfterMs);
  }

  stop(): void {
    for (const t of this.pending.values()) this.clock.cancel(t);
    this.pending.clear();
  }
}

export function nsName(ns: string | undefined, name: string): string {
  return `${ns ?? ''}/${name}`;
}

export function splitKey(key: string): [string | undefined, string] {
  const i = key.indexOf('/');
  const ns = key.slice(0, i);
  return [ns === '' ? undefined : ns, key.slice(i + 1)];
}
