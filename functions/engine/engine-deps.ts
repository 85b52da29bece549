import type { Action } from '../domain/model/action.js';
import type { Policy } from '../domain/policy/policy.js';
import type { CheckRunPublisher } from '../ports/check-runs.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterGateways } from '../ports/cluster-gateway.js';
import type { ClusterSightings } from '../ports/cluster-sightings.js';
import type { DeliveryLedger } from '../ports/delivery-ledger.js';
import type { EngineLog, EngineMetrics } from '../ports/engine-reporting.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { GithubGateway } from '../ports/github-gateway.js';
import type { WakeScheduler } from '../ports/wake-scheduler.js';
import type { WatchCursors } from '../ports/watch-cursors.js';

/** What the engine runs on: its ports, its policy and its clock. */
export interface EngineDeps {
  store: FactsStore;
  clusters: ClusterGateways;
  github: GithubGateway;
  bus: EventPublisher;
  policy: () => Promise<Policy>;
  clock: Clock;
  log: EngineLog;
  metrics: EngineMetrics;
  wake?: WakeScheduler;
  /** A claim left without result this long is taken to be a crash and re-checked. @default 120 s */
  staleClaimMs?: number;
  /** The webhook ledger: when given, the sweep redelivers webhooks that never reached us. */
  deliveries?: DeliveryLedger;
  /** The invocation's remaining time: the sweep stops cleanly before it runs out. */
  remainingTimeMs?: () => number;
  /** Runners per list page in the sweep. @default 500 */
  sweepPageSize?: number;
  /** Called between acting and publishing the audit event (a test's crash point). */
  afterAct?: (action: Action) => void | Promise<void>;
  /** Explains each action on its job with a `runner-medic` check run; absent: none. */
  checkRuns?: CheckRunPublisher;
  /** Notes which clusters exporter events come from (the doctor's Events checks). */
  sightings?: ClusterSightings;
  /** Where the sweep resumes watching each cluster's runners (resourceVersions); absent: it lists in full each sweep. */
  watchCursors?: WatchCursors;
}

/** A claim left without result this long is taken to be a crash and re-checked. */
export const STALE_CLAIM_MS = 120_000;
