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
}

export const ARC_FINALIZER = 'ephemeralrunner.actions.github.com/finalizer';
export const ARC_REGISTRATION_FINALIZER =
  'ephemeralrunner.actions.github.com/runner-registration-finalizer';
export const ERS_FINALIZER = 'ephemeralrunnerset.actions.github.com/finalizer';
export const ARS_FINALIZER = 'autoscalingrunnerset.actions.github.com/finalizer';

export function arcBehaviour(version: ArcVersion): ArcBehaviour {
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
      };
  }
}
