import type { EphemeralRunner, Pod } from '../model/cluster-facts.js';
import type { RunnerRegistration } from '../model/facts.js';
import type { Loss } from '../model/loss.js';
import { isoTime as iso } from '../model/iso-time.js';
import { podLossFacts, runnerLoss } from './runner-loss.js';

/** ARC's longest retry backoff is 80 s; a failure this recent explains a re-created pod. */
const RETRY_WINDOW_MS = 300_000;
/** A runner connects seconds after its container starts; offline this long means it never will. */
const OFFLINE_AFTER_START_MS = 120_000;

function lossOf(er: EphemeralRunner, pod: Pod, detail: string, at: number): Loss {
  return runnerLoss(
    {
      ...podLossFacts(pod),
      cause: { kind: 'pod-not-found' },
      signal: { source: 'listing', detail },
      at,
    },
    { pod: pod.metadata, er: er.metadata },
  );
}

const live = (pod: Pod) => pod.phase !== 'Failed' && pod.phase !== 'Succeeded';

/**
 * ARC ≥ 0.12 re-creates a NotFound pod without checking whether its EphemeralRunner already took a
 * job (actions-runner-controller#4588): the new pod reuses the spent JIT config and never works.
 * Evidence: the ER's job fields were cached before a listing found the pod missing, and the live
 * pod was created after that, with no `failures` entry (ARC's own retry of a Failed pod) to
 * explain it.
 */
export function classifyRecreatedPod(
  er: EphemeralRunner,
  pod: Pod,
  missingSince: number | null,
  jobSeenAt: number | null,
): Loss | null {
  const created = pod.metadata.creationTimestamp;
  if (created === null || missingSince === null || jobSeenAt === null || !live(pod)) return null;
  if (jobSeenAt > missingSince || created < missingSince) return null;
  const retried = er.failures.some(
    (f) => f.at === null || (f.at <= created && created - f.at <= RETRY_WINDOW_MS),
  );
  if (retried) return null;
  return lossOf(
    er,
    pod,
    `pod was missing at ${iso(missingSince)} after its runner took a job, and ARC re-created it at ${iso(created)} with the spent JIT config (actions-runner-controller#4588)`,
    missingSince,
  );
}

/**
 * An idle live runner pod whose GitHub registration has stayed offline for OFFLINE_AFTER_START_MS
 * after both the pod's creation and the registration going offline: the runner will never connect
 * (spent JIT config, registration removed). The loss dates from when that became clear. Only for
 * idle runners: a busy one is never judged on its registration status alone (correlate checks
 * the ER and the jobs; this checks the registration's own `busy`).
 */
export function classifyOfflineRunner(
  er: EphemeralRunner,
  pod: Pod,
  registration: RunnerRegistration | undefined,
  now: number,
): Loss | null {
  const created = pod.metadata.creationTimestamp;
  if (!registration || registration.status !== 'offline' || registration.offlineSince === null)
    return null;
  if (registration.busy) return null;
  if (created === null || pod.phase !== 'Running') return null;
  const clearAt = Math.max(registration.offlineSince, created) + OFFLINE_AFTER_START_MS;
  if (now < clearAt) return null;
  return lossOf(
    er,
    pod,
    `pod Running since ${iso(created)} but GitHub runner ${registration.id} offline since ${iso(registration.offlineSince)}`,
    clearAt,
  );
}
