import type { Rng } from '../../rng.js';

/** Which requests a fault applies to. */
interface FaultMatch {
  method?: string;
  /** Matched against the request path (without query). */
  path?: RegExp | string;
  /** Sim-time window in which the fault is active. */
  from?: number;
  until?: number;
  /** Chance each matching request is hit (default 1). */
  probability?: number;
  /** Hit at most this many requests, then the fault is spent (default unlimited). */
  times?: number;
}

export type FaultSpec =
  | ({ kind: 'primary-rate-limit'; status?: 403 | 429; resetAfterS?: number } & FaultMatch)
  | ({ kind: 'secondary-rate-limit'; status?: 403 | 429; retryAfterS?: number } & FaultMatch)
  | ({ kind: 'server-error'; status?: 500 | 502 | 503 | 504 } & FaultMatch)
  | ({ kind: 'latency'; ms: number } & FaultMatch)
  /** The request takes effect, but its answer is lost: a 502/504 from a proxy, after the fact. */
  | ({ kind: 'lost-response'; status?: 502 | 504 } & FaultMatch);

export interface Fault {
  readonly id: number;
  readonly spec: FaultSpec;
  hits: number;
}

/** Injected API misbehaviour, evaluated for every request in the order the faults were added. */
export class ApiFaults {
  private readonly faults: Fault[] = [];
  private nextId = 1;

  constructor(private readonly rng: Rng) {}

  add(spec: FaultSpec): Fault {
    const fault: Fault = { id: this.nextId++, spec, hits: 0 };
    this.faults.push(fault);
    return fault;
  }

  remove(fault: Fault): void {
    const index = this.faults.indexOf(fault);
    if (index >= 0) this.faults.splice(index, 1);
  }

  clear(): void {
    this.faults.length = 0;
  }

  /** Total simulated latency for this request, and the first error fault that hits it. */
  evaluate(
    method: string,
    path: string,
    nowMs: number,
  ): { latencyMs: number; error: FaultSpec | undefined } {
    let latencyMs = 0;
    let error: FaultSpec | undefined;
    for (const fault of this.faults) {
      if (!this.hits(fault, method, path, nowMs, fault.spec.kind === 'latency' || !error)) continue;
      if (fault.spec.kind === 'latency') latencyMs += fault.spec.ms;
      else error = fault.spec;
    }
    return { latencyMs, error };
  }

  private hits(
    fault: Fault,
    method: string,
    path: string,
    nowMs: number,
    wanted: boolean,
  ): boolean {
    const spec = fault.spec;
    if (!wanted) return false;
    if (spec.times !== undefined && fault.hits >= spec.times) return false;
    if (spec.method && spec.method.toUpperCase() !== method) return false;
    if (
      spec.path !== undefined &&
      !(typeof spec.path === 'string' ? path === spec.path : spec.path.test(path))
    )
      return false;
    if (spec.from !== undefined && nowMs < spec.from) return false;
    if (spec.until !== undefined && nowMs >= spec.until) return false;
    if (spec.probability !== undefined && !this.rng.chance(spec.probability)) return false;
    fault.hits += 1;
    return true;
  }
}
