/** Helpers for the pod status shapes the kubelet writes. */
import { setCondition } from '../api/kube-api.js';
import { isoTime, type ContainerStatus, type Pod } from '../types.js';

export function containerId(podUid: string, container: string): string {
  return `containerd://${Buffer.from(`${podUid}/${container}`).toString('hex').slice(0, 64).padEnd(64, '0')}`;
}

export function waitingStatuses(pod: Pod, reason = 'ContainerCreating'): ContainerStatus[] {
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

export function runningStatuses(pod: Pod, now: number): ContainerStatus[] {
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
