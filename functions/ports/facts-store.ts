import type { Action, ActionOutcome, ActionTarget } from '../domain/model/action.js';
import type { JobAnnotation } from '../domain/classify/annotations.js';
import type {
  ActionRecord,
  BreakerState,
  ErJobCacheEntry,
  JobRecord,
  MissingPod,
  RunRecord,
  RunnerOnNode,
  RunnerRegistration,
} from '../domain/model/facts.js';
import type { Loss, NodeSignal, RunnerWarning } from '../domain/model/loss.js';
import type { BreakerGate } from '../domain/decide/rules/circuit-breaker.js';

/** What the store remembers about some subjects: everything in Facts but the live objects. */
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
  breakers: BreakerState[];
}

export const emptyStoredFacts = (): StoredFacts => ({
  jobs: [],
  runs: [],
  erJobCache: [],
  missingPods: [],
  losses: [],
  nodeSignals: [],
  runnerWarnings: [],
  registrations: [],
  actions: [],
  breakers: [],
});

/** The scale-set registry's key of an EphemeralRunnerSet's location (by its runner-name prefix). */
export const RUNNER_SET_KEY = 'runner-set:';

/** A confirmed loss as a breaker counts it: the runner (key) in its scope, and when. */
export interface CountedLoss {
  cluster: string;
  scaleSet: string | null;
  runner: string;
  at: number;
}

/** A runner as the store knows it: where it lives. */
export interface RunnerRef {
  cluster: string;
  namespace: string;
  name: string;
}

/** What one read of a subject's partition or index returned, and how many items it read. */
/** An org or repository owner with jobs recorded, and its App installation when known. */
export interface KnownOwner {
  owner: string;
  installationId: number | null;
}

export interface StoreRead {
  facts: StoredFacts;
  /** Runners named in the items read (losses, cached job fields, warnings). */
  runners: RunnerRef[];
  itemsRead: number;
}

/** Several reads as one: their facts and runners together, their items counted. */
export function mergeReads(...reads: StoreRead[]): StoreRead {
  const facts = emptyStoredFacts();
  for (const k of Object.keys(facts) as (keyof StoredFacts)[])
    (facts[k] as unknown[]) = reads.flatMap((r) => r.facts[k] as unknown[]);
  return {
    facts,
    runners: reads.flatMap((r) => r.runners),
    itemsRead: reads.reduce((n, r) => n + r.itemsRead, 0),
  };
}

export interface StaleClaim {
  key: string;
  target: ActionTarget;
  claimedAt: number;
  /** The action as claimed, for its audit event (null for a claim stored before 2026-12). */
  action: Action | null;
}

/** A breaker's answer to a destructive call: pass, or held until `until` and why. */
export type BreakerAdmission = { passed: true } | { passed: false; why: string; until: number };

export type ClaimResult =
  { claimed: true; previous: ActionRecord | null } | { claimed: false; existing: ActionRecord };

/**
 * A timer kept as data: at `at`, decide again for these subjects. One decision's timer is one
 * item whatever the number of its subjects, so it costs one write to set and one to clear.
 */
export interface DueWake {
  at: number;
  subjects: string[];
  /** Its place among timers set in order for one moment (a breaker's held work). */
  position?: number;
  /** The stored timer's name, for clearWake. */
  key: string;
}

/** Where a paged sweep of one cluster stands, so that the next invocation resumes there. */
export interface SweepCursor {
  /** Index into the cluster's namespace list (or discovered namespaces). */
  namespaceIndex: number;
  /** When the pass in progress began (epoch ms); null between passes. */
  passStartedAt: number | null;
  /** When the last complete pass began: pods created since then are new to the store. */
  lastPassStartedAt?: number | null;
}

/** One audit event of the trail: when it was written (epoch ms), and the event. */
export interface AuditRecord {
  at: number;
  detailType: string;
  detail: Record<string, unknown>;
}

/** An audit event written with its action's result, not yet published (the outbox). */
export interface PendingAudit {
  key: string;
  event: { detailType: string; detail: Record<string, unknown> };
}

/**
 * The facts store, laid out by subject: one partition per job, run, runner name, node, EC2
 * instance, scale-set breaker and registration; indexes join a job to its runner name, a run to
 * its jobs and re-run intents, an org to its registrations. Nothing holds all facts of one kind.
 */
export interface FactsStore {
  /** A job's partition (the job record). */
  readJob(repo: string, jobId: number, now: number): Promise<StoreRead>;
  /** A run's jobs, run records and the actions on the run (re-runs, cancels). */
  readRun(repo: string, runId: number, now: number): Promise<StoreRead>;
  /** Everything filed under a runner name: jobs it ran, its losses, warnings, cached ER job
   * fields, missing-pod records, its registration and the actions on it (all clusters). */
  readRunnerName(name: string, now: number): Promise<StoreRead>;
  /** What the store holds about the runners of one namespace (losses, cached job fields, …). */
  readNamespace(cluster: string, namespace: string, now: number): Promise<StoreRead>;
  /**
   * Node signals of a node, and the runners that took a job on it (one item a runner, kept a day):
   * a node signal is decided from these without reading the runners' objects.
   */
  readNode(
    cluster: string,
    nodeName: string,
    now: number,
  ): Promise<StoreRead & { runnersOnNode: RunnerOnNode[] }>;
  /** The signals of every node of a cluster, in one read: what the sweep needs of its nodes. */
  readClusterNodeSignals(cluster: string, now: number): Promise<StoreRead>;
  /** The node an EC2 instance is (cluster/node), with its signals; null when unknown. */
  readInstance(
    instanceId: string,
    now: number,
  ): Promise<{ node: { cluster: string; nodeName: string } | null; read: StoreRead }>;
  /** The breaker of a cluster (scaleSet null) or of one scale set: loss counter and trip. */
  readBreaker(cluster: string, scaleSet: string | null, now: number): Promise<StoreRead>;
  /**
   * Where scale sets' runners live (lower-cased scale-set name → `cluster/namespace` list), as the
   * sweep last saw them: one small item, so a job's labels are resolved with one read.
   */
  readScaleSets(now: number): Promise<{ sets: Record<string, string[]>; itemsRead: number }>;
  /** Records where one cluster's scale sets live (the sweep, after listing the cluster). */
  recordScaleSets(cluster: string, sets: Record<string, string[]>, now: number): Promise<void>;
  /** Queued jobs of an owner (the sparse queued index), for the sweep's starvation check. */
  readQueuedJobs(owner: string, now: number): Promise<StoreRead>;
  /**
   * Jobs that ran on a runner and were recorded finished between `from` and `to` (epoch ms), by
   * the minute: the sweep looks whether their runners outlived them. It may return a few from
   * the edge minutes outside the span.
   */
  readFinishedJobs(from: number, to: number, now: number): Promise<StoreRead>;
  /** Registrations of one org or repo owner, for the sweep's refresh. */
  readRegistrations(owner: string, now: number): Promise<StoreRead>;
  /** Owners (orgs) with jobs recorded, with an installation id, for the sweep. */
  knownOwners(now: number): Promise<KnownOwner[]>;

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
  /** Remembers which node an EC2 instance is (seen on a Node's providerID). */
  recordInstance(instanceId: string, cluster: string, nodeName: string, now: number): Promise<void>;
  /**
   * Remembers a runner that runs a job on its node, with the identity its objects proved and (once
   * its EphemeralRunner has them) its job fields: its job cache too, found by name and namespace.
   * The first sight is kept (a day); a placement without a job is completed once with it.
   */
  recordRunnerOnNode(runner: RunnerOnNode, now: number): Promise<void>;
  /** Caches ER job fields the first time they are seen; later writes keep the first `seenAt`. */
  cacheErJob(entry: ErJobCacheEntry, now: number): Promise<void>;
  /** Records a pod seen missing; keeps the first `since`. */
  recordMissingPod(pod: MissingPod, now: number): Promise<void>;
  clearMissingPod(cluster: string, namespace: string, name: string): Promise<void>;
  /** One registration per runner; `offlineSince` as computed by the caller. */
  putRegistration(registration: RunnerRegistration, now: number): Promise<void>;
  deleteRegistration(registration: RunnerRegistration): Promise<void>;

  /**
   * Counts a confirmed loss in a breaker (conditional update: a runner counts once). Entries
   * older than `windowMs` are dropped in the same write.
   */
  countLoss(loss: CountedLoss, windowMs: number, now: number): Promise<void>;
  /** Opens a breaker until `openUntil` (kept open for its window whatever the count does). */
  openBreaker(
    cluster: string,
    scaleSet: string | null,
    trippedAt: number,
    openUntil: number,
    now: number,
  ): Promise<void>;
  /**
   * Lets one destructive call through a breaker, or holds it. ONE conditional write on the
   * breaker item checks its state (closed, fewer than `gate.limit` losses in its window, the
   * call's own loss included) and counts the call's loss (`loss`: its runner and when it was
   * lost; null when the call is for no known loss), so concurrent invocations cannot both pass
   * a breaker that either of them fills.
   */
  passBreaker(
    gate: BreakerGate,
    loss: Pick<CountedLoss, 'runner' | 'at'> | null,
    now: number,
  ): Promise<BreakerAdmission>;
  /** Adds subjects held by an open breaker, to be decided again, in order, when it closes. */
  holdInBreaker(
    cluster: string,
    scaleSet: string | null,
    subjects: string[],
    now: number,
  ): Promise<void>;

  /**
   * Claims an action's idempotency key with a conditional write. A key can be claimed again
   * when its last outcome asks for a retry, or when a claim was left without result for longer
   * than `staleAfterMs` (a crash between claim and result).
   */
  claimAction(action: Action, now: number, staleAfterMs: number): Promise<ClaimResult>;
  /** Records the result and, in the same write, the audit event to publish (the outbox). */
  finishAction(
    key: string,
    outcome: ActionOutcome,
    now: number,
    detail: string,
    audit?: PendingAudit['event'],
  ): Promise<void>;
  /** The audit event was published: take it out of the outbox. */
  markPublished(key: string): Promise<void>;
  /**
   * The audit trail: events of actions that finished between `since` and `until` (epoch ms),
   * oldest first, at most `limit` (one query per day, through the `grp = AUDIT#<day>` index).
   */
  auditTrail(since: number, until: number, limit: number): Promise<AuditRecord[]>;
  /** Audit events written but not published (a crash between the write and PutEvents). */
  unpublishedAudits(limit: number): Promise<PendingAudit[]>;
  /** Claims left without a result for longer than `staleAfterMs` (a crash between claim and result). */
  staleClaims(now: number, staleAfterMs: number): Promise<StaleClaim[]>;

  /** Earliest pending wake-up (epoch ms) the store knows of, to send one wake per moment. */
  nextWake(now: number): Promise<number | null>;
  /**
   * Records a timer: at `at`, decide again for `subjects`. With `firstPosition`, the subjects
   * are kept in order from that place, and come before unordered timers of the same moment.
   */
  scheduleWake(at: number, now: number, subjects?: string[], firstPosition?: number): Promise<void>;
  /** Timers due by `now`, oldest first (ordered ones in their order), at most `limit`. */
  dueWakes(now: number, limit: number): Promise<DueWake[]>;
  clearWake(wake: DueWake): Promise<void>;

  /**
   * Where the sweep's GitHub-side queued check stands in an owner's repositories (an index into
   * the installation's repository list); 0 when it has not begun.
   */
  repositoryScan(owner: string): Promise<number>;
  setRepositoryScan(owner: string, next: number, now: number): Promise<void>;

  sweepCursor(cluster: string): Promise<SweepCursor | null>;
  setSweepCursor(cluster: string, cursor: SweepCursor | null, now: number): Promise<void>;

  /** A subject that keeps failing: count one more failure; returns the count in its window. */
  noteFailure(subject: string, now: number): Promise<{ failures: number; setAside: boolean }>;
  /** Marks a subject set aside (its failures exhausted the backoff) until `until`. */
  setAside(subject: string, until: number, now: number): Promise<void>;
  isSetAside(subject: string, now: number): Promise<boolean>;
}
