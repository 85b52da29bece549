import { parseDocument } from 'yaml';
import type { LossKind } from '../model/loss.js';
import { policySchema } from './policy-schema.js';
import { problemLines } from '../model/zod-problems.js';

/** Policy: one YAML/JSON document, validated; every key optional, safe defaults filled in. */

export interface RuleSwitch {
  enabled: boolean;
  /** Rule-level dry run: the rule emits actions marked dryRun. */
  dryRun: boolean;
}

export interface Rules {
  /** Rule 1. */
  freePoisonedSlot: RuleSwitch & {
    /** Wait this long after the loss so ARC ≥ 0.12 can recover on its own (backoff ≤ 155 s). */
    graceSeconds: number;
    /**
     * The grace instead when ARC will not free the slot (ARC ≤ 0.11, or the runner had taken a
     * job): 0, act at once. The policy document also accepts its old name,
     * `legacyArcGraceSeconds`.
     */
    arcWontRecoverGraceSeconds: number;
    /** Force-delete (grace 0) a runner pod left on a NotReady or deleted node. */
    forceDeletePodOnDeadNode: boolean;
    /** Strip ARC's finalizers from an EphemeralRunner stuck deleting this long; null = never. */
    removeStuckFinalizerAfterSeconds: number | null;
  };
  /** Rule 2. */
  starvingQueue: RuleSwitch & { queuedSeconds: number };
  /** Rule 3. */
  rerunKilledJob: RuleSwitch & {
    /** Automatic re-runs per job (same run, same job name, across attempts). */
    budget: number;
    retryIntervalSeconds: number;
    /** Stop retrying `403 already running` after this long. */
    retryForSeconds: number;
    /** Loss causes that do not earn a re-run (an OOM kill is usually the job's own doing). */
    excludeCauses: LossKind[];
  };
  /**
   * Rule 4, the hard-kill fast path: a job still in progress whose runner the cluster shows dead
   * (pod gone or re-created, node gone or NotReady, EphemeralRunner failed) is cancelled rather
   * than left to GitHub's lost-runner lock (~576 s), so that rule 3 can re-run it.
   */
  hungJob: RuleSwitch & {
    /**
     * Wait this long after the runner is confirmed dead: a runner stopped gracefully reports its
     * shutdown and GitHub concludes the job itself in 15–26 s (GAG, measured).
     */
    graceSeconds: number;
    /** Force-cancel when the run is still in progress this long after the cancel. */
    forceCancelAfterSeconds: number;
    /**
     * Cancel even while another job of the run is still in progress on a live runner. Cancelling a
     * run cancels every job in it, so by default runner-medic waits for GitHub's lock instead.
     */
    cancelWithLiveJobs: boolean;
    /** A refused cancel (500, or 409 "re-run … not yet queued") is retried after this, doubling. */
    retryIntervalSeconds: number;
    /** Stop retrying refused cancels after this long; GitHub's lock then recovers the job. */
    retryForSeconds: number;
  };
  /** Rule 5. */
  orphanRegistration: RuleSwitch & { graceSeconds: number };
  /** Rule 6. */
  warnedNode: RuleSwitch & { replaceIdle: boolean };
  /**
   * Rule 8: runners of a scale set exit 0 without taking a job (GitHub refuses a runner version
   * below its floor). Reported once per scale set and version; nothing is deleted.
   */
  deprecatedRunner: RuleSwitch;
  /** Rule 7. */
  circuitBreaker: RuleSwitch & {
    windowSeconds: number;
    maxLossesPerScaleSet: number;
    maxLossesPerCluster: number;
  };
}

export type RuleName = keyof Rules;

export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K];
};

export interface Override {
  enabled?: boolean;
  dryRun?: boolean;
  rules?: DeepPartial<Rules>;
  /** Narrows the global allowlists for this cluster or scale set (both must allow). */
  allow?: { namespaces?: string[]; repositories?: string[] };
}

export interface Policy {
  /** Global dry run: no mutating call anywhere, whatever an override says. */
  dryRun: boolean;
  /** A `runner-medic` check run explains each re-run or cancel on the run's commit. */
  checkRuns: boolean;
  allow: {
    /** Cluster names (as in events' `clusterName`); `*` globs. */
    clusters: string[];
    /** `namespace` or `cluster/namespace`; `*` globs. */
    namespaces: string[];
    /** `owner/repo`, `owner/*` or `*`. */
    repositories: string[];
  };
  rules: Rules;
  clusters: Record<string, Override & { scaleSets?: Record<string, Override> }>;
  /** Per scale set, in every cluster. */
  scaleSets: Record<string, Override>;
}

export const DEFAULT_RULES: Rules = {
  freePoisonedSlot: {
    enabled: true,
    dryRun: false,
    graceSeconds: 180,
    arcWontRecoverGraceSeconds: 0,
    forceDeletePodOnDeadNode: true,
    removeStuckFinalizerAfterSeconds: null,
  },
  starvingQueue: { enabled: true, dryRun: false, queuedSeconds: 300 },
  rerunKilledJob: {
    enabled: true,
    dryRun: false,
    budget: 2,
    retryIntervalSeconds: 30,
    retryForSeconds: 900,
    excludeCauses: ['oom-killed'],
  },
  hungJob: {
    enabled: true,
    dryRun: false,
    graceSeconds: 30,
    forceCancelAfterSeconds: 10,
    cancelWithLiveJobs: false,
    retryIntervalSeconds: 5,
    retryForSeconds: 300,
  },
  orphanRegistration: { enabled: true, dryRun: false, graceSeconds: 900 },
  warnedNode: { enabled: true, dryRun: false, replaceIdle: true },
  deprecatedRunner: { enabled: true, dryRun: false },
  circuitBreaker: {
    enabled: true,
    dryRun: false,
    windowSeconds: 900,
    maxLossesPerScaleSet: 10,
    maxLossesPerCluster: 30,
  },
};

export const DEFAULT_POLICY: Policy = {
  dryRun: false,
  checkRuns: true,
  allow: { clusters: ['*'], namespaces: ['*'], repositories: ['*'] },
  rules: DEFAULT_RULES,
  clusters: {},
  scaleSets: {},
};

export type PolicyResult =
  { ok: true; value: Policy } | { ok: false; reason: string; errors: string[] };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Overlay `patch` on `base`; arrays and scalars replace, objects merge. */
export function mergeDeep<T>(base: T, patch: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(patch))
    return (patch === undefined ? base : patch) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) out[k] = mergeDeep(out[k], v);
  return out as T;
}

/** Validate an already-parsed document. Every error names its key path. */
export function policyFromObject(doc: unknown): PolicyResult {
  const r = policySchema.safeParse(doc ?? {});
  if (!r.success) {
    const errors = problemLines(r.error);
    return { ok: false, reason: `invalid policy: ${errors.join('; ')}`, errors };
  }
  const d = r.data;
  return {
    ok: true,
    value: {
      dryRun: d.dryRun ?? false,
      checkRuns: d.checkRuns ?? DEFAULT_POLICY.checkRuns,
      allow: mergeDeep(DEFAULT_POLICY.allow, d.allow),
      rules: mergeDeep(DEFAULT_RULES, d.rules),
      clusters: d.clusters ?? {},
      scaleSets: d.scaleSets ?? {},
    },
  };
}

/** Parse a YAML or JSON policy document (empty text = all defaults). */
export function parsePolicy(text: string): PolicyResult {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const errors = doc.errors.map((e) => `(document): ${e.message}`);
    return { ok: false, reason: `invalid policy: ${errors.join('; ')}`, errors };
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (e) {
    // e.g. an alias to an anchor that is not set: only found when the document is resolved.
    const message = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      reason: `invalid policy: (document): ${message}`,
      errors: [`(document): ${message}`],
    };
  }
  return policyFromObject(value);
}
