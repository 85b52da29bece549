import type { EphemeralRunner, Pod } from '../model/cluster-facts.js';
import { parseLowResource, parseNodeCondition } from '../parse/eviction-message.js';
import type { Loss, LossCause, Signal } from '../model/loss.js';
import { scaleSetOf } from '../correlate/runner-guard.js';
import { podLossFacts, runnerLoss } from './runner-loss.js';
import { isoTime } from '../model/iso-time.js';

const SHUTDOWN_REASONS = new Set(['Terminated', 'NodeShutdown', 'Shutdown']);
/** ARC's runner container (the chart's pod template). */
const RUNNER_CONTAINER = 'runner';

function fromStatus(pod: Pod): { cause: LossCause; signal: Signal } | null {
  const { phase, reason } = pod;
  const message = pod.message ?? '';
  const signal = { source: 'pod-status' as const, detail: `${phase ?? '?'}/${reason}: ${message}` };
  if (reason && SHUTDOWN_REASONS.has(reason) && /shut(ting)? ?down|shutdown/i.test(message))
    return { cause: { kind: 'kubelet-shutdown' }, signal };
  if (phase !== 'Failed' || !reason) return null;
  if (reason === 'Evicted') {
    const low = parseLowResource(message);
    if (low) return { cause: { kind: 'node-pressure-eviction', ...low }, signal };
    const cond = parseNodeCondition(message);
    if (cond)
      return {
        cause: { kind: 'admission-reject', resource: cond.resource, detail: cond.condition },
        signal,
      };
    return {
      cause: { kind: 'node-pressure-eviction', resource: 'other', container: null },
      signal,
    };
  }
  if (message.startsWith('Pod was rejected'))
    return { cause: { kind: 'admission-reject', resource: null, detail: reason }, signal };
  return null;
}

function fromDisruptionTarget(pod: Pod): { cause: LossCause; signal: Signal } | null {
  const c = pod.conditions.find((x) => x.type === 'DisruptionTarget' && x.status === 'True');
  if (!c?.reason) return null;
  const signal = {
    source: 'pod-condition' as const,
    detail: `DisruptionTarget ${c.reason}${c.message ? `: ${c.message}` : ''}`,
  };
  switch (c.reason) {
    case 'EvictionByEvictionAPI':
      return { cause: { kind: 'api-eviction', by: 'unknown', karpenterReason: null }, signal };
    case 'DeletionByTaintManager':
      return { cause: { kind: 'taint-manager' }, signal };
    case 'DeletionByPodGC':
      return { cause: { kind: 'pod-gc' }, signal };
    case 'PreemptionByScheduler':
      return { cause: { kind: 'preemption' }, signal };
    case 'TerminationByKubelet': {
      const low = parseLowResource(c.message ?? '');
      if (low) return { cause: { kind: 'node-pressure-eviction', ...low }, signal };
      return { cause: { kind: 'kubelet-shutdown' }, signal };
    }
    default:
      return null;
  }
}

function fromContainers(pod: Pod): { cause: LossCause; signal: Signal } | null {
  const all = [...pod.containerStatuses, ...pod.initContainerStatuses];
  const oom = all.find((s) => s.terminated?.reason === 'OOMKilled');
  if (!oom?.terminated) return null;
  return {
    cause: { kind: 'oom-killed', container: oom.name },
    signal: {
      source: 'container-status',
      detail: `container ${oom.name} terminated OOMKilled (exit ${oom.terminated.exitCode})`,
    },
  };
}

/**
 * Why this pod was lost, or null if it is not (yet) lost. Order: the pod's own status
 * (kubelet eviction/admission/shutdown), then the DisruptionTarget condition, then OOMKilled.
 */
export function classifyPod(pod: Pod): Loss | null {
  const found = fromStatus(pod) ?? fromDisruptionTarget(pod) ?? fromContainers(pod);
  if (!found) return null;
  const at =
    pod.conditions.find((c) => c.type === 'DisruptionTarget')?.lastTransitionTime ??
    pod.conditions.find((c) => c.type === 'Ready' && c.status !== 'True')?.lastTransitionTime ??
    pod.metadata.deletionTimestamp ??
    null;
  return runnerLoss({ ...podLossFacts(pod), ...found, at }, { pod: pod.metadata });
}

/** 128 + SIGKILL: the process was killed, it did not exit by itself. */
const SIGKILL_EXIT = 137;

/**
 * A runner container killed (exit 137, not OOMKilled) on a pod nothing else explains: the runner
 * could not tell GitHub. A container that exited by itself (0, 1, …) is not a kill, and an
 * explained pod (eviction, shutdown, OOM) is classifyPod's. ARC ≥ 0.15 deletes such a runner's
 * EphemeralRunner and pod within a second (ephemeralrunner_controller.go
 * `deleteEphemeralRunnerOrPod`, background deregistration #4664), so this is recorded when seen:
 * it is the only trace of the kill (no component emits an Event for it).
 */
export function classifyKilledRunner(pod: Pod): Loss | null {
  if (classifyPod(pod)) return null;
  const runner = pod.containerStatuses.find((c) => c.name === RUNNER_CONTAINER);
  const t = runner?.terminated;
  if (!runner || t?.exitCode !== SIGKILL_EXIT) return null;
  const at =
    pod.conditions.find((c) => c.type === 'Ready' && c.status !== 'True')?.lastTransitionTime ??
    pod.metadata.deletionTimestamp ??
    null;
  return runnerLoss(
    {
      ...podLossFacts(pod),
      cause: { kind: 'runner-killed', container: runner.name, exitCode: t.exitCode },
      signal: {
        source: 'container-status',
        detail: `container ${runner.name} terminated ${t.reason ?? 'no reason'} (exit ${t.exitCode}): killed`,
      },
      at,
    },
    { pod: pod.metadata },
  );
}

/** An EphemeralRunner in `phase: Failed` (InvalidPod; TooManyPodFailures ≤ 0.11) holds a slot. */
export function classifyEphemeralRunner(er: EphemeralRunner): Loss | null {
  if (er.phase !== 'Failed') return null;
  return runnerLoss(
    {
      cluster: er.cluster,
      namespace: er.metadata.namespace,
      runnerName: er.metadata.name,
      scaleSet: scaleSetOf(er.metadata),
      cause: { kind: 'runner-failed', reason: er.reason },
      signal: {
        source: 'runner-status',
        detail: `EphemeralRunner phase Failed/${er.reason ?? '?'}: ${er.message ?? ''}`,
      },
      at: null,
    },
    { er: er.metadata },
  );
}

/**
 * The EphemeralRunner exists and its pod was looked up and found missing since `since`: ARC would
 * re-create it with a spent JIT config (actions-runner-controller#4588). `scaleSet`: the runner's,
 * as correlate knows it (its EphemeralRunner's label, else its cached job fields).
 */
export function classifyMissingPod(
  er: EphemeralRunner,
  since: number,
  scaleSet: string | null,
): Loss {
  const runnerName = er.metadata.name;
  return runnerLoss(
    {
      cluster: er.cluster,
      namespace: er.metadata.namespace,
      runnerName,
      scaleSet,
      cause: { kind: 'pod-not-found' },
      signal: { source: 'listing', detail: `pod ${runnerName} not found since ${isoTime(since)}` },
      at: since,
    },
    { er: er.metadata },
  );
}
