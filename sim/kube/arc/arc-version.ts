/**
 * Per-version ARC behaviour (reference/arc.md §2). '0.9' stands for the 0.2.0–0.11.0 line
 * (the seed bug), '0.13' for 0.13.1, '0.15' for 0.15.0/0.15.1 (current).
 */
export type ArcVersion = '0.9' | '0.13' | '0.15';

export const ARC_VERSIONS: readonly ArcVersion[] = ['0.9', '0.13', '0.15'];

export interface ArcBehaviour {
  version: ArcVersion;
  /** `app.kubernetes.io/version` and the runner's user agent. */
  chartVersion: string;
  /** Both ER finalizers set at creation (0.13.1, #4320) rather than on first reconcile. */
  finalizersAtCreation: boolean;
  /** `status.failures` values: RFC 3339 times (>= 0.12.0) or `true` (<= 0.11.0). */
  failureTimestamps: boolean;
  /** `status.jobId` written on JobStarted (>= 0.13.0). */
  writesJobId: boolean;
  /** Pod re-creation backoff by failure count, in seconds (>= 0.12.0, #4059). */
  backoffSeconds: number[];
  /** More failures than this: mark Failed (0.9) or delete the ER (0.13). */
  maxFailures: number;
  /** JIT config kept in ER status (left it in 0.13.0, #4191). */
  jitConfigInStatus: boolean;
  /**
   * The ERS scales and cleans up only when `spec.patchID` is 0 or differs from the newest ER's
   * `actions.github.com/patch-id` (ephemeralrunnerset_controller.go at 0.9.3 and 0.13.1, the
   * `latestPatchID` check), so a deleted runner is replaced at the listener's next batch.
   */
  patchIdGate: boolean;
  /**
   * The ER's finalizer is removed in the same reconcile that issues the pod and secret deletes
   * (0.13.1 `cleanupResources`), so the ER goes while its pod is still Terminating; 0.9.3 waits
   * until both are gone.
   */
  releaseFinalizerBeforePodGone: boolean;
  /**
   * 0.15 (#4664): the registration finalizer is removed first and `RemoveRunner` runs in a
   * background queue that retries `JobStillRunning` every 30 s.
   */
  backgroundDeregistration: boolean;
  /** 0.15 (#4642 `scaleUpTotal`): ERs being deleted count towards capacity. */
  deletingCountsTowardsCapacity: boolean;
  /** 0.15 (#4646): ER phase `Running` means the runner took a job (set by the listener). */
  runningMeansBusy: boolean;
  /** ERS status carries currentReplicas and pending/running/failed counts (gone in 0.15, #4570). */
  ersStatusCounts: boolean;
}

/** Per-cluster overrides of the version's behaviour (e.g. the patch-ID gate on 0.9/0.13). */
export type ArcOverrides = Partial<
  Pick<ArcBehaviour, 'patchIdGate' | 'releaseFinalizerBeforePodGone'>
>;

export const ARC_FINALIZER = 'ephemeralrunner.actions.github.com/finalizer';
export const ARC_REGISTRATION_FINALIZER =
  'ephemeralrunner.actions.github.com/runner-registration-finalizer';
export const ERS_FINALIZER = 'ephemeralrunnerset.actions.github.com/finalizer';
export const ARS_FINALIZER = 'autoscalingrunnerset.actions.github.com/finalizer';

function arcBehaviour(version: ArcVersion): ArcBehaviour {
  switch (version) {
    case '0.9':
      return {
        version,
        chartVersion: '0.9.3',
        finalizersAtCreation: false,
        failureTimestamps: false,
        writesJobId: false,
        backoffSeconds: [0],
        maxFailures: 5,
        jitConfigInStatus: true,
        patchIdGate: false,
        releaseFinalizerBeforePodGone: false,
        backgroundDeregistration: false,
        deletingCountsTowardsCapacity: false,
        runningMeansBusy: false,
        ersStatusCounts: true,
      };
    case '0.13':
      return {
        version,
        chartVersion: '0.13.1',
        finalizersAtCreation: true,
        failureTimestamps: true,
        writesJobId: true,
        backoffSeconds: [0, 5, 10, 20, 40, 80],
        maxFailures: 5,
        jitConfigInStatus: false,
        // Both true in the real 0.13.1; off here until the coordinator flips the defaults
        // (SimClusterOptions.arc), so existing figures stay comparable.
        patchIdGate: false,
        releaseFinalizerBeforePodGone: false,
        backgroundDeregistration: false,
        deletingCountsTowardsCapacity: false,
        runningMeansBusy: false,
        ersStatusCounts: true,
      };
    case '0.15':
      return {
        version,
        chartVersion: '0.15.1',
        finalizersAtCreation: true,
        failureTimestamps: true,
        writesJobId: true,
        backoffSeconds: [0, 5, 10, 20, 40, 80],
        maxFailures: 5,
        jitConfigInStatus: false,
        patchIdGate: true,
        releaseFinalizerBeforePodGone: true,
        backgroundDeregistration: true,
        deletingCountsTowardsCapacity: true,
        runningMeansBusy: true,
        ersStatusCounts: false,
      };
  }
}

/**
 * The version's behaviour with overrides. The 0.9.3 gate is real too, so `patchIdGate: true`
 * is faithful on every version; `releaseFinalizerBeforePodGone` is faithful on 0.13 and 0.15 only.
 */
export function arcBehaviourWith(version: ArcVersion, overrides: ArcOverrides = {}): ArcBehaviour {
  const base = arcBehaviour(version);
  return {
    ...base,
    ...(overrides.patchIdGate !== undefined ? { patchIdGate: overrides.patchIdGate } : {}),
    ...(overrides.releaseFinalizerBeforePodGone !== undefined
      ? { releaseFinalizerBeforePodGone: overrides.releaseFinalizerBeforePodGone }
      : {}),
  };
}
