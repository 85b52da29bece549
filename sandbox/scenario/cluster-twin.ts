import type { AuditEntry, RequestLogEntry } from '../../sim/kube/api/audit.js';
import type { AppliedFault } from './outcome.js';
import type { ClusterFault } from './scenario-schema.js';

/** An event as the cluster side puts it on EventBridge (kubernetes-event-exporter, or EC2). */
export interface BusEntry {
  source: string;
  'detail-type': string;
  detail: unknown;
}

/** What the scenario runner needs of one simulated cluster. */
export interface ClusterTwin {
  readonly name: string;
  /** A kubeconfig for the API server, authenticating as `actor` (`admin`: system:masters). */
  kubeconfig(actor: 'runner-medic' | 'user' | 'admin'): string;
  audit(): AuditEntry[];
  /** Every HTTP request the API server answered (reads too), with its status. */
  requests?(): RequestLogEntry[];
  /** Events exported to the bus (already thinned by the scenario's event drop rate). */
  onBusEntry(listener: (entry: BusEntry) => void): void;
  /** Resolves once applied; may wait on the clock for its target, so never await it inside a clock callback. */
  applyFault(fault: ClusterFault): Promise<AppliedFault>;
  stop(): Promise<void>;
}
