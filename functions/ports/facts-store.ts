import type { Action, ActionOutcome, ActionTarget } from '../domain/action.js';
import type { JobAnnotation } from '../domain/annotations.js';
import type {
  ActionRecord,
  ErJobCacheEntry,
  JobRecord,
  MissingPod,
  RunRecord,
  RunnerRegistration,
} from '../domain/facts.js';
import type { Loss, NodeSignal, RunnerWarning } from '../domain/loss.js';

/** What the store remembers between invocations: everything in Facts but the live listings. */
export interface StoredFacts {
  jobs: JobRecord[];
  runs: RunRecord[];
  erJobCache: ErJobCacheEntry[];
  missingPods: MissingPod[];
  losses: Loss[];
  nodeSignals: NodeSignal[];
  runnerWarnings: RunnerWarning[];
  registrations: RunnerRegistration[];
  actions: ActionRecord[];
  /** Earliest pending wake-up (grace period end, retry), epoch ms. */
  wakeAt: number | null;
}

export interface StaleClaim {
  key: string;
  target: ActionTarget;
  claimedAt: number;
}

export type ClaimResult =
  { claimed: true; previous: ActionRecord | null } | { claimed: false; existing: ActionRecord };

export interface FactsStore {
  load(now: number): Promise<StoredFacts>;
  /** Keeps the newest state of a job: a later attempt or a later stage wins; older input is dropped. */
  recordJob(record: JobRecord, now: number): Promise<void>;
  recordRun(record: RunRecord, now: number): Promise<void>;
  setJobAnnotations(
    repo: string,
    jobId: number,
    annotations: JobAnnotation[],
    now: number,
  ): Promise<void>;
  recordLoss(loss: Loss, now: number): Promise<void>;
  recordNodeSignal(signal: NodeSignal, now: number): Promise<void>;
  recordRunnerWarning(warning: RunnerWarning, now: number): Promise<void>;
  /** Caches ER job fields the first time they are seen; later writes keep the first `seenAt`. */
  cacheErJob(entry: ErJobCacheEntry, now: number): Promise<void>;
  /** Records a pod seen missing; keeps the first `since`. */
  recordMissingPod(pod: MissingPod, now: number): Promise<void>;
  clearMissingPod(cluster: string, namespace: string, name: string): Promise<void>;
  replaceRegistrations(registrations: RunnerRegistration[], now: number): Promise<void>;
  /**
   * Claims an action's idempotency key with a conditional write. A key can be claimed again
   * when its last outcome asks for a retry, or when a claim was left without result for longer
   * than `staleAfterMs` (a crash between claim and result).
   */
  claimAction(action: Action, now: number, staleAfterMs: number): Promise<ClaimResult>;
  finishAction(key: string, outcome: ActionOutcome, now: number, detail: string): Promise<void>;
  /** Claims left without a result for longer than `staleAfterMs` (a crash between claim and result). */
  staleClaims(now: number, staleAfterMs: number): Promise<StaleClaim[]>;
  scheduleWake(at: number, now: number): Promise<void>;
}
