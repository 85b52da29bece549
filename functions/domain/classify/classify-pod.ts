import type { EphemeralRunner, Pod } from '../model/cluster-facts.js';
import { parseLowResource, parseNodeCondition } from '../parse/eviction-message.js';
import type { Loss, LossCause, Signal } from '../model/loss.js';
import { isArcOwned, isRunnerPod, scaleSetOf } from '../correlate/runner-guard.js';

const SHUTDOWN_REASONS = new Set(['Terminated', 'NodeShutdown', 'Shutdown']);

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
  return {
    cluster: pod.cluster,
    namespace: pod.metadata.namespace,
    runnerName: pod.metadata.name,
    podUid: pod.metadata.uid || null,
    nodeName: pod.nodeName,
    scaleSet: scaleSetOf(pod.metadata),
    ownedByArc: isRunnerPod(pod.metadata),
    cause: found.cause,
    signal: found.signal,
    at,
  };
}

/** An EphemeralRunner in `phase: Failed` (InvalidPod; TooManyPodFailures ≤ 0.11) holds a slot. */
export function classifyEphemeralRunner(er: EphemeralRunner): Loss | null {
  if (er.phase !== 'Failed') return null;
  return {
    cluster: er.cluster,
    namespace: er.metadata.namespace,
    runnerName: er.metadata.name,
    podUid: null,
    nodeName: null,
    scaleSet: scaleSetOf(er.metadata),
    ownedByArc: isArcOwned(er.metadata),
    cause: { kind: 'runner-failed', reason: er.reason },
    signal: {
      source: 'runner-status',
      detail: `EphemeralRunner phase Failed/${er.reason ?? '?'}: ${er.message ?? ''}`,
    },
    at: null,
  };
}

/**
 * The EphemeralRunner exists, is not done, and a listing taken at `listedAt` found no pod of its
 * name: ARC would re-create it with a spent JIT config (#4588).
 */
export function classifyMissingPod(er: EphemeralRunner, listedAt: number): Loss {
  return {
    cluster: er.cluster,
    namespace: er.metadata.namespace,
    runnerName: er.metadata.name,
    podUid: null,
    nodeName: null,
    scaleSet: scaleSetOf(er.metadata),
    ownedByArc: isArcOwned(er.metadata),
    cause: { kind: 'pod-not-found' },
    signal: { source: 'listing', detail: `no pod named ${er.metadata.name} in the listing` },
    at: listedAt,
  };
}
