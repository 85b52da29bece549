/**
 * Who changed what. Every mutation, through HTTP (actor from the bearer token) or from a model
 * (actor 'arc', 'kubelet', ...), is recorded with the object's labels and owners at that moment,
 * so a scenario can prove which objects an actor touched and count its calls.
 */
import type { OwnerReference } from '../types.js';

export type MutationVerb = 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'evict';

export interface AuditEntry {
  /** Simulated time (ms since epoch). */
  at: number;
  by: string;
  api: 'kubernetes';
  verb: MutationVerb;
  /** Plural resource, qualified for non-core groups (`ephemeralrunners.actions.github.com`). */
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Labels of the object when the call was made (the new object's for a create). */
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
  /** HTTP status of the outcome (200/201 success, 404, 409, 422, ...). */
  code: number;
  /** The patch type for a patch, `dryRun` when nothing was persisted. */
  detail?: string;
}

export interface RequestLogEntry {
  at: number;
  by: string;
  method: string;
  path: string;
  verb: string;
  code: number;
  /** Objects the answer carried: a list's items, one for a get, each event of a watch so far. */
  objects?: number;
}

export class AuditLog {
  readonly entries: AuditEntry[] = [];
  readonly requests: RequestLogEntry[] = [];

  record(entry: AuditEntry): void {
    this.entries.push(entry);
  }

  request(entry: RequestLogEntry): void {
    this.requests.push(entry);
  }

  by(actor: string): AuditEntry[] {
    return this.entries.filter((e) => e.by === actor);
  }
}
