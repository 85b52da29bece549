/**
 * What the kubelets of a cluster know and the writes every one of their paths shares: each
 * node's agent (up, shutting down, under pressure), the runtime of each admitted pod, and the
 * pod status, event and deletion calls the kubelet makes.
 */
import type { TimerHandle } from '../../clock.js';
import { ApiError } from '../api/errors.js';
import { isoTime, type Pod } from '../types.js';
import type { EventSpec } from './event-recorder.js';
import type { ModelContext } from './model-context.js';
import type { PressureCondition } from './node-conditions.js';
import { terminate } from './pod-status.js';
import type { RunnerProcess } from './runner-process.js';
import { nsName } from './work-queue.js';

export const KUBELET = 'kubelet';

export interface NodeAgent {
  name: string;
  /** The kubelet is running and posting status. */
  up: boolean;
  shuttingDown: boolean;
  pressure: Set<PressureCondition>;
}

export interface PodRuntime {
  key: string;
  uid: string;
  node: string;
  startTimer?: TimerHandle;
  killTimer?: TimerHandle;
  started: boolean;
  process?: RunnerProcess;
  terminating: boolean;
  /** Status the kubelet should write when the containers stop (eviction, shutdown). */
  onStop?: (pod: Pod) => void;
}

export class KubeletState {
  readonly nodes = new Map<string, NodeAgent>();
  readonly pods = new Map<string, PodRuntime>();

  constructor(readonly ctx: ModelContext) {}

  isUp(nodeName: string): boolean {
    return this.nodes.get(nodeName)?.up === true;
  }

  podsOn(nodeName: string): Pod[] {
    return this.ctx.api.all<Pod>('pods').filter((p) => p.spec.nodeName === nodeName);
  }

  /** The pod (which must exist) and its runtime when the kubelet admitted it. */
  runtime(ns: string, name: string): { pod: Pod; rt: PodRuntime | undefined } {
    const pod = this.ctx.api.get('pods', ns, name) as Pod;
    return { pod, rt: this.pods.get(nsName(ns, name)) };
  }

  /** Forgets a pod's runtime and its pending timers. */
  drop(rt: PodRuntime): void {
    this.ctx.clock.cancel(rt.startTimer);
    this.ctx.clock.cancel(rt.killTimer);
    this.pods.delete(rt.key);
  }

  /** The kubelet's write to a pod's status subresource. */
  writeStatus(ns: string | undefined, name: string, change: (pod: Pod) => void): void {
    this.ctx.api.modify<Pod>(KUBELET, 'pods', ns, name, change, { subresource: 'status' });
  }

  /** An event from the kubelet of `host` about `pod`. */
  record(pod: Pod, host: string | undefined, spec: Omit<EventSpec, 'component' | 'host'>): void {
    this.ctx.events.record(pod, { ...spec, component: KUBELET, host }, KUBELET);
  }

  /** Rejects a pod at admission: Failed with the kubelet's reason, and a Warning event. */
  reject(pod: Pod, reason: string, message: string, eventMessage: string): void {
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name as string;
    const now = this.ctx.clock.now();
    this.writeStatus(ns, name, (p) => {
      const status = (p.status ??= {});
      status.phase = 'Failed';
      status.reason = reason;
      status.message = message;
      status.startTime ??= isoTime(now);
    });
    this.record(pod, pod.spec.nodeName, { type: 'Warning', reason, message: eventMessage });
    this.ctx.log('kubelet', 'Pod rejected at admission', {
      pod: `${ns}/${name}`,
      node: pod.spec.nodeName,
      reason,
      message,
    });
  }

  /** Writes the kubelet's terminal status now (containers killed) or when the process exits. */
  stopWith(
    pod: Pod,
    rt: PodRuntime | undefined,
    apply: (p: Pod) => void,
    signal: () => void,
  ): void {
    if (rt?.process && rt.process.state !== 'exited') {
      rt.onStop = apply;
      signal();
      return;
    }
    if (rt) this.drop(rt);
    const now = this.ctx.clock.now();
    this.writeStatus(pod.metadata.namespace, pod.metadata.name as string, (p) => {
      if (rt?.started) terminate(p, now, 137, 'Error');
      apply(p);
    });
  }

  /** The kubelet's final delete of a terminated pod (grace 0, for this uid only). */
  finishDeletion(pod: Pod): void {
    const key = nsName(pod.metadata.namespace, pod.metadata.name as string);
    const rt = this.pods.get(key);
    if (rt) this.drop(rt);
    try {
      this.ctx.api.delete(KUBELET, 'pods', pod.metadata.namespace, pod.metadata.name as string, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      });
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
    }
  }
}
