/** Helpers for the pod status shapes the kubelet writes. */
import { setCondition, setDisruptionTarget } from '../api/object-utils.js';
import { isoTime, type ContainerStatus, type Pod } from '../types.js';

function containerId(podUid: string, container: string): string {
  return `containerd://${Buffer.from(`${podUid}/${container}`).toString('hex').slice(0, 64).padEnd(64, '0')}`;
}

function waitingStatuses(pod: Pod, reason = 'ContainerCreating'): ContainerStatus[] {
  return pod.spec.containers.map((c) => ({
    name: c.name,
    state: { waiting: { reason } },
    ready: false,
    restartCount: 0,
    image: c.image ?? '',
    imageID: '',
    started: false,
  }));
}

function runningStatuses(pod: Pod, now: number): ContainerStatus[] {
  return pod.spec.containers.map((c) => ({
    name: c.name,
    state: { running: { startedAt: isoTime(now) } },
    ready: true,
    restartCount: 0,
    image: c.image ?? '',
    imageID: `${c.image ?? ''}@sha256:${'0'.repeat(64)}`,
    containerID: containerId(pod.metadata.uid as string, c.name),
    started: true,
  }));
}

/** Marks containers terminated (all, or only `only`), keeping their start times. */
export function terminate(
  pod: Pod,
  now: number,
  exitCode: number,
  reason: string,
  only?: string,
): void {
  const status = (pod.status ??= {});
  status.containerStatuses = (status.containerStatuses ?? []).map((cs) => {
    if (only && cs.name !== only) return cs;
    if (cs.state.terminated) return cs;
    const startedAt = cs.state.running?.startedAt;
    return {
      ...cs,
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode,
          reason,
          ...(startedAt ? { startedAt } : {}),
          finishedAt: isoTime(now),
          ...(cs.containerID ? { containerID: cs.containerID } : {}),
        },
      },
    };
  });
}

export function allTerminated(pod: Pod): boolean {
  const cs = pod.status?.containerStatuses ?? [];
  return cs.length > 0 && cs.every((c) => c.state.terminated);
}

export function notReady(pod: Pod, now: number, reason = 'PodFailed'): void {
  setCondition(pod, { type: 'Ready', status: 'False', reason }, now);
  setCondition(pod, { type: 'ContainersReady', status: 'False', reason }, now);
}

export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * The status of a pod the kubelet has just admitted: Pending on its node, sandbox ready,
 * containers still creating.
 */
export function markAdmitted(pod: Pod, now: number, hostIP: string, podIP: string): void {
  const status = (pod.status ??= {});
  status.phase = 'Pending';
  status.startTime = isoTime(now);
  status.hostIP = hostIP;
  status.podIP = podIP;
  setCondition(pod, { type: 'PodReadyToStartContainers', status: 'True' }, now);
  setCondition(pod, { type: 'Initialized', status: 'True' }, now);
  const message = `containers with unready status: [${pod.spec.containers.map((c) => c.name).join(' ')}]`;
  for (const type of ['Ready', 'ContainersReady'])
    setCondition(pod, { type, status: 'False', reason: 'ContainersNotReady', message }, now);
  status.containerStatuses = waitingStatuses(pod);
}

/** Every container started: the pod is Running and Ready. */
export function markRunning(pod: Pod, now: number): void {
  const status = (pod.status ??= {});
  status.phase = 'Running';
  status.containerStatuses = runningStatuses(pod, now);
  setCondition(pod, { type: 'ContainersReady', status: 'True' }, now);
  setCondition(pod, { type: 'Ready', status: 'True' }, now);
}

/** With restartPolicy Never, once its containers stopped: Succeeded when all exited 0, else Failed. */
export function settlePhase(pod: Pod): void {
  if (!allTerminated(pod) && pod.spec.containers.length !== 1) return;
  const codes = (pod.status?.containerStatuses ?? []).map((c) => c.state.terminated?.exitCode ?? 0);
  (pod.status as { phase: string }).phase = codes.every((c) => c === 0) ? 'Succeeded' : 'Failed';
}

/** The kubelet ends the pod itself (eviction, node shutdown): Failed with `reason`, disrupted. */
export function markKilledByKubelet(pod: Pod, reason: string, message: string, now: number): void {
  const status = (pod.status ??= {});
  status.phase = 'Failed';
  status.reason = reason;
  status.message = message;
  setDisruptionTarget(pod, 'TerminationByKubelet', message, now);
  notReady(pod, now);
}
