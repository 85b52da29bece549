import type { LossCause, NodeWarningKind, Signal } from './loss.js';

/**
 * A rule's id, `rule-<number>-<name>`: the rules themselves are listed in decide/rules/index.ts.
 */
export type RuleId = `rule-${number}-${string}`;

/**
 * `unknown`: the API call got no clear answer (a timeout, a 5xx) and reading the object could
 * not tell whether it took effect; the next try re-reads before it acts.
 */
export type ActionOutcome =
  'claimed' | 'succeeded' | 'retry-later' | 'gave-up' | 'failed' | 'dry-run' | 'unknown';

interface KubeObjectRef {
  cluster: string;
  namespace: string;
  name: string;
  /** Precondition: act only on the object with this uid, never a fresh one of the same name. */
  uid: string;
}

export interface RunRef {
  /** `owner/repo` */
  repo: string;
  installationId: number | null;
  runId: number;
  runAttempt: number;
}

export type ActionTarget =
  | ({ kind: 'delete-ephemeral-runner' } & KubeObjectRef)
  /** `force`: grace period 0; only for a pod on a deleted or NotReady node. */
  | ({ kind: 'delete-pod'; force: boolean } & KubeObjectRef)
  | ({ kind: 'remove-finalizer'; finalizers: string[] } & KubeObjectRef)
  | ({ kind: 'rerun-failed-jobs'; jobIds: number[] } & RunRef)
  | ({ kind: 'rerun-job'; jobId: number } & RunRef)
  /**
   * `jobIds`: the jobs whose runners are dead; GitHub is asked only while they are still in
   * progress and, unless `allowLiveJobs`, while no other job of the run is.
   */
  | ({ kind: 'cancel-run'; jobIds: number[]; allowLiveJobs: boolean } & RunRef)
  | ({ kind: 'force-cancel-run'; jobIds: number[]; allowLiveJobs: boolean } & RunRef)
  | {
      kind: 'delete-runner-registration';
      owner: { org: string } | { repo: string };
      installationId: number | null;
      runnerId: number;
      runnerName: string;
    }
  | {
      kind: 'mark-at-risk';
      cluster: string;
      namespace: string;
      runnerName: string;
      warning: NodeWarningKind;
    }
  /** A pending intent: re-run these jobs once the run (this attempt) has completed. */
  | ({ kind: 'await-run-completion'; jobIds: number[] } & RunRef)
  /** A timer as data: wake the engine at `at` to retry the action `retryOf`. */
  | { kind: 'schedule-retry'; retryOf: string; at: number }
  /**
   * Runners of a scale set exit 0 without taking a job. `version`: the runner version, when known;
   * carrying it out asks GitHub when that version stops working.
   */
  | {
      kind: 'report-deprecated-runner';
      cluster: string;
      namespace: string;
      scaleSet: string;
      version: string | null;
      runnerName: string;
      evidence: string;
      /** Whose App installation asks GitHub about the version; null: not asked. */
      owner: { org: string } | { repo: string } | null;
      installationId: number | null;
    }
  | {
      kind: 'report-starvation';
      scaleSet: string;
      repo: string;
      jobId: number;
      queuedSince: number;
    }
  | {
      kind: 'trip-breaker';
      cluster: string;
      scaleSet: string | null;
      losses: number;
      threshold: number;
      windowSeconds: number;
    };

export type ActionKind = ActionTarget['kind'];

/**
 * Which path brought a lost job back, for the audit: `fast-path` (runner-medic cancelled the run
 * of a runner the cluster showed dead), `lock-expiry` (GitHub failed the job when the dead
 * runner's lock lapsed, ~576 s), `graceful` (the runner reported its shutdown itself).
 */
export type RecoveryPath = 'fast-path' | 'lock-expiry' | 'graceful';

/** Kinds that call a mutating Kubernetes or GitHub API. The others only record or alert. */
export const MUTATING_KINDS: ReadonlySet<ActionKind> = new Set<ActionKind>([
  'delete-ephemeral-runner',
  'delete-pod',
  'remove-finalizer',
  'rerun-failed-jobs',
  'rerun-job',
  'cancel-run',
  'force-cancel-run',
  'delete-runner-registration',
]);

export const RERUN_KINDS: ReadonlySet<ActionKind> = new Set<ActionKind>([
  'rerun-failed-jobs',
  'rerun-job',
]);

/** Where an action lands, for the policy, the breaker and the audit event. */
export interface ActionScope {
  cluster: string | null;
  namespace: string | null;
  scaleSet: string | null;
  repo: string | null;
  runnerName: string | null;
  jobUrl: string | null;
}

export interface Action {
  key: string;
  rule: RuleId;
  target: ActionTarget;
  scope: ActionScope;
  cause: LossCause | null;
  signal: Signal | null;
  /** Human-readable, for the audit event and the logs. */
  reason: string;
  dryRun: boolean;
  /** Re-run budget slots this action charges when it succeeds. */
  budgetKeys: string[];
  /** For re-runs: which path recovered the lost job. */
  recoveredBy?: RecoveryPath;
}

/** An action a rule wanted but a guardrail held back, and why (audit, tests). */
export interface HeldAction {
  key: string;
  rule: RuleId;
  kind: ActionKind;
  scope: ActionScope;
  why: string;
}

/** Facts the engine should fetch, then call decide() again. */
export type Need =
  | { kind: 'annotations'; repo: string; installationId: number | null; jobId: number }
  | { kind: 'ephemeral-runner'; cluster: string; namespace: string; name: string }
  /** A runner known only from the store: read its pod and EphemeralRunner now. */
  | { kind: 'runner-objects'; cluster: string; namespace: string; name: string }
  | { kind: 'run'; repo: string; installationId: number | null; runId: number }
  /** The runners of a run attempt's in-progress jobs, which a slice reads only when asked. */
  | { kind: 'runners-of-run'; repo: string; runId: number; runAttempt: number };

/** A runner by where it lives: a timer set for it alone. */
export interface RunnerAt {
  cluster: string;
  namespace: string;
  name: string;
}

export interface Decision {
  actions: Action[];
  held: HeldAction[];
  needs: Need[];
  /** The earliest time a grace period, retry or threshold ends: call decide() again then. */
  wakeAt: number | null;
  /**
   * When every timer of the decision is one runner's (a grace, a stuck runner's check), those
   * runners: deciding them alone then is enough. Null when a timer concerns more (a queued job,
   * a breaker, a registration): the whole slice is decided again.
   */
  wakeRunners: RunnerAt[] | null;
}
