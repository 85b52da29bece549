/**
 * The default scheduler: binds each pending pod to a Ready, schedulable node whose NoSchedule/
 * NoExecute taints (including the node-pressure taints) it tolerates and that has room
 * (allocatable pods). The race in which a pod lands on a node just before its pressure taint
 * (seed 000) is the `admissionReject` fault.
 */
import { setCondition } from '../api/kube-api.js';
import type { KubeObject, Node, Pod, Taint, Toleration } from '../types.js';
import type { ModelContext } from './model-context.js';
import { isTerminal } from './pod-status.js';
import type { StoreEvent } from '../api/store.js';
import { Reconciler } from '../reconciler.js';
import { nsName, splitKey } from './work-queue.js';

const ACTOR = 'default-scheduler';

function tolerates(tolerations: Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some(
    (t) =>
      (t.effect === undefined || t.effect === '' || t.effect === taint.effect) &&
      (t.operator === 'Exists'
        ? t.key === undefined || t.key === '' || t.key === taint.key
        : t.key === taint.key && (t.value ?? '') === (taint.value ?? '')),
  );
}

export class Scheduler extends Reconciler {
  private readonly reported = new Set<string>();
  /** Called with pods that fit nowhere (Karpenter's provisioner listens). */
  onUnschedulable: ((pods: Pod[]) => void) | undefined;

  constructor(
    ctx: ModelContext,
    private readonly nodeUsable: (name: string) => boolean,
  ) {
    super(ctx, 'scheduler');
  }

  /** An unbound pod when it changes; every unbound pod when a node changes or a pod goes. */
  protected keysFor(event: StoreEvent): string[] {
    const unbound = (p: KubeObject) => !(p as Pod).spec.nodeName && !p.metadata.deletionTimestamp;
    const keyOf = (p: KubeObject) => nsName(p.metadata.namespace, p.metadata.name as string);
    if (event.resource === 'pods' && event.type !== 'DELETED')
      return unbound(event.object) ? [keyOf(event.object)] : [];
    if (event.resource === 'nodes' || event.resource === 'pods')
      return this.ctx.api.store.scan('pods').filter(unbound).map(keyOf);
    return [];
  }

  /** Binds the pod to the least loaded node that fits, or reports it unschedulable. */
  reconcile(key: string): void {
    const [ns, name] = splitKey(key);
    const { api, clock } = this.ctx;
    const pod = api.tryGet<Pod>('pods', ns, name);
    if (!pod || pod.spec.nodeName || pod.metadata.deletionTimestamp || isTerminal(pod)) return;
    const nodes = api.all<Node>('nodes');
    const load = new Map<string, number>();
    for (const p of api.store.scan('pods')) {
      const n = (p as Pod).spec.nodeName;
      if (n && !isTerminal(p as Pod)) load.set(n, (load.get(n) ?? 0) + 1);
    }
    const fits = nodes.filter((n) => {
      if (
        n.metadata.deletionTimestamp ||
        n.spec.unschedulable ||
        !this.nodeUsable(n.metadata.name as string)
      )
        return false;
      if (n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') return false;
      // NodeAffinity filter plugin: every nodeSelector label must match.
      const labels = n.metadata.labels ?? {};
      if (!Object.entries(pod.spec.nodeSelector ?? {}).every(([k, v]) => labels[k] === v))
        return false;
      const hard = (n.spec.taints ?? []).filter(
        (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute',
      );
      if (!hard.every((t) => tolerates(pod.spec.tolerations, t))) return false;
      const max = Number(n.status?.allocatable?.pods ?? 110);
      return (load.get(n.metadata.name as string) ?? 0) < max;
    });
    fits.sort(
      (a, b) =>
        (load.get(a.metadata.name as string) ?? 0) - (load.get(b.metadata.name as string) ?? 0) ||
        String(a.metadata.name).localeCompare(String(b.metadata.name)),
    );
    const now = clock.now();
    const target = fits[0];
    if (!target) return this.unschedulable(pod, nodes.length, now);
    const nodeName = target.metadata.name as string;
    api.modify<Pod>(ACTOR, 'pods', ns, name, (p) => void (p.spec.nodeName = nodeName));
    api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => setCondition(p, { type: 'PodScheduled', status: 'True' }, now),
      { subresource: 'status' },
    );
    this.ctx.events.record(
      pod,
      {
        type: 'Normal',
        reason: 'Scheduled',
        message: `Successfully assigned ${ns}/${name} to ${nodeName}`,
        component: ACTOR,
      },
      ACTOR,
    );
  }

  /** No node fits: PodScheduled=False/Unschedulable, one FailedScheduling event per pod. */
  private unschedulable(pod: Pod, nodeCount: number, now: number): void {
    const { api } = this.ctx;
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name as string;
    const message = `0/${nodeCount} nodes are available: ${nodeCount === 0 ? 'no nodes available to schedule pods' : `${nodeCount} node(s) didn't match Pod's node affinity/selector, had untolerated taint, or were not ready`}. preemption: 0/${nodeCount} nodes are available: ${nodeCount} Preemption is not helpful for scheduling.`;
    api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) =>
        setCondition(
          p,
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message },
          now,
        ),
      { subresource: 'status' },
    );
    if (!this.reported.has(pod.metadata.uid as string)) {
      this.reported.add(pod.metadata.uid as string);
      this.ctx.events.record(
        pod,
        { type: 'Warning', reason: 'FailedScheduling', message, component: ACTOR },
        ACTOR,
      );
    }
    this.onUnschedulable?.([pod]);
  }
}
