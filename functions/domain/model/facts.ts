import type { JobAnnotation } from '../classify/annotations.js';
import type { EphemeralRunner, EphemeralRunnerJobFields, Node, Pod } from './cluster-facts.js';
import type { ActionKind, ActionOutcome, RuleId } from './action.js';
import type { Loss, NodeSignal, RunnerWarning } from './loss.js';
import type { JobFacts, RepositoryRef, RunFacts } from './observation.js';

/** The latest known state of a GitHub job (from observations), with its annotations once read. */
export interface JobRecord {
  repository: RepositoryRef;
  installationId: number | null;
  job: JobFacts;
  /** Failure annotations of the job's check run; null until the engine has read them. */
  annotations: JobAnnotation[] | null;
}

export interface RunRecord {
  repository: RepositoryRef;
  installationId: number | null;
  run: RunFacts;
}

/** EphemeralRunner job fields cached when first seen (ARC may delete the object quickly). */
export interface ErJobCacheEntry {
  cluster: string;
  namespace: string;
  runnerName: string;
  scaleSet: string | null;
  runnerId: number | null;
  job: EphemeralRunnerJobFields;
  seenAt: number;
}

/**
 * A runner that took a job, on the node its pod is bound to, with the identity its objects proved
 * then: ARC's labels, an EphemeralRunner owner of the same name and uid, owned by an
 * EphemeralRunnerSet. A node signal
 * is decided from these, and the live objects are read only for a runner a rule would act on.
 */
export interface RunnerOnNode {
  cluster: string;
  namespace: string;
  name: string;
  nodeName: string;
  podUid: string;
  ephemeralRunnerUid: string;
  scaleSet: string | null;
  /** The GitHub runner id the EphemeralRunner had (`status.runnerId`), null before registration. */
  runnerId: number | null;
  seenAt: number;
  /**
   * The job fields its EphemeralRunner had when first seen with a job: a runner is recorded on its
   * node when it takes a job, and the record is its job cache too. Absent on records from before
   * 2026-12, which were written for every pod.
   */
  job?: EphemeralRunnerJobFields;
}

/** A full listing of EphemeralRunners in a namespace was taken at `at`. */
interface Listing {
  cluster: string;
  namespace: string;
  at: number;
}

/** A pod the engine looked up and found missing, since `since` (first seen missing). */
export interface MissingPod {
  cluster: string;
  namespace: string;
  name: string;
  since: number;
}

/** A GitHub self-hosted runner registration (REST runner object). */
export interface RunnerRegistration {
  id: number;
  name: string;
  status: string;
  busy: boolean;
  labels: string[];
  /** Where it is registered: an organization or a repository (`owner/repo`). */
  owner: { org: string } | { repo: string };
  installationId: number | null;
  /** First seen offline (epoch ms), null while online. */
  offlineSince: number | null;
}

/** What the store remembers of an action: its claim and, once carried out, its outcome. */
export interface ActionRecord {
  key: string;
  kind: ActionKind;
  rule: RuleId;
  claimedAt: number;
  /**
   * `claimed`: claimed, no result yet. `retry-later`: e.g. 403 already running or 422 busy.
   * `gave-up`: a final refusal (other 403s). `failed`: an error worth retrying.
   */
  outcome: ActionOutcome;
  finishedAt: number | null;
  dryRun: boolean;
  /** Re-run budget slots this action charged. */
  budgetKeys: string[];
  /** Ids of the jobs concerned (re-runs, cancels). */
  jobIds: number[];
}

/**
 * A circuit breaker of a cluster (scaleSet null) or a scale set, as stored: the confirmed losses
 * counted in its window (runner key → lost at), and its trip, which stays open until `openUntil`.
 */
export interface BreakerState {
  cluster: string;
  scaleSet: string | null;
  losses: Record<string, number>;
  trippedAt: number | null;
  openUntil: number | null;
  /** Subjects whose destructive actions it held, in the order they were held. */
  held: string[];
}

/** Everything the store knows, as one snapshot. decide() reads only this, the policy and now. */
export interface Facts {
  pods: Pod[];
  ephemeralRunners: EphemeralRunner[];
  nodes: Node[];
  erJobCache: ErJobCacheEntry[];
  listings: Listing[];
  missingPods: MissingPod[];
  /** Losses classified from events (objects in `pods`/`ephemeralRunners` are classified anew). */
  losses: Loss[];
  nodeSignals: NodeSignal[];
  runnerWarnings: RunnerWarning[];
  jobs: JobRecord[];
  runs: RunRecord[];
  registrations: RunnerRegistration[];
  actions: ActionRecord[];
  /** Stored breakers of the clusters and scale sets in this slice. */
  breakers: BreakerState[];
  /** Runner pods on the nodes of this slice, as the sweep last proved them. */
  runnersOnNodes: RunnerOnNode[];
  /**
   * Run attempts (`runAttemptKey`) whose in-progress jobs' runners were read for this decision
   * (rule 4 asks): a job of one whose runner is still unseen runs where runner-medic cannot see.
   */
  runnersOfRunsRead: string[];
}

export const emptyFacts = (): Facts => ({
  pods: [],
  ephemeralRunners: [],
  nodes: [],
  erJobCache: [],
  listings: [],
  missingPods: [],
  losses: [],
  nodeSignals: [],
  runnerWarnings: [],
  jobs: [],
  runs: [],
  registrations: [],
  actions: [],
  breakers: [],
  runnersOnNodes: [],
  runnersOfRunsRead: [],
});
