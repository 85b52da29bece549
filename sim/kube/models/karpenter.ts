/**
 * Karpenter (v1, AWS provider) as it touches runner pods:
 * - disruption by consolidation, drift or expiry: `DisruptionTerminating` ("Disrupting Node:
 *   <reason>") on the Node, the `karpenter.sh/disrupted:NoSchedule` taint, then a drain through
 *   the Eviction API (pods get DisruptionTarget/EvictionByEvictionAPI and an `Evicted` event
 *   "Evicted pod: <reason>"), then the node deleted and its instance terminated;
 * - `karpenter.sh/do-not-disrupt` blocks consolidation and drift (a `DisruptionBlocked` event),
 *   never expiry or interruption;
 * - spot interruption: `SpotInterrupted` and `TerminatingOnInterruption`, then the same drain
 *   ("Evicted pod: Forceful Termination");
 * - optional provisioning of a node for unschedulable pods.
 */
import { ApiError } from '../api/errors.js';
import { isoTime, type Node, type Pod } from '../types.js';
import type { Instance } from './ec2.js';
import type { ModelContext } from './model-context.js';
import { isTerminal } from './pod-status.js';

export type DisruptionMethod = 'consolidation' | 'drift' | 'expiry';

const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
const DISRUPTED_TAINT = 'karpenter.sh/disrupted';

const ACTOR = 'karpenter';

export interface KarpenterHooks {
  terminateInstance(nodeName: string): void;
  launchNode(): void;
}

export class Karpenter {
  private readonly draining = new Map<string, string>();
  private launching = false;
  provisioning = false;

  constructor(
    private readonly ctx: ModelContext,
    private readonly hooks: KarpenterHooks,
  ) {}

  /** Why a pod blocks voluntary disruption, or undefined. */
  private blocker(pod: Pod): string | undefined {
    const v = pod.metadata.annotations?.[DO_NOT_DISRUPT];
    if (v === undefined || v === 'false') return undefined;
    if (v === 'true')
      return `pod "${pod.metadata.namespace}/${pod.metadata.name}" has "${DO_NOT_DISRUPT}" annotation`;
    const m = /^(\d+)(s|m|h)$/.exec(v);
    if (!m) return undefined;
    const ms = Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'];
    const since = Date.parse(pod.metadata.creationTimestamp ?? '') || 0;
    return this.ctx.clock.now() < since + ms
      ? `pod "${pod.metadata.namespace}/${pod.metadata.name}" has "${DO_NOT_DISRUPT}" annotation`
      : undefined;
  }

  /** Voluntary disruption of a node. Returns 'blocked' when do-not-disrupt stops it. */
  disrupt(nodeName: string, method: DisruptionMethod): 'started' | 'blocked' {
    const node = this.ctx.api.get('nodes', undefined, nodeName) as Node;
    const pods = this.podsOn(nodeName).filter((p) => !isTerminal(p));
    if (method !== 'expiry') {
      const blocked = pods.map((p) => this.blocker(p)).find((b) => b !== undefined);
      if (blocked) {
        this.ctx.events.record(
          node,
          {
            type: 'Normal',
            reason: 'DisruptionBlocked',
            message: `Cannot disrupt Node: ${blocked}`,
            component: ACTOR,
          },
          ACTOR,
        );
        this.ctx.log('karpenter', 'disruption blocked', { node: nodeName, method, blocked });
        return 'blocked';
      }
    }
    const reason =
      method === 'consolidation'
        ? pods.length === 0
          ? 'Empty'
          : 'Underutilized'
        : method === 'drift'
          ? 'Drifted'
          : 'Expired';
    this.ctx.events.record(
      node,
      {
        type: 'Normal',
        reason: 'DisruptionTerminating',
        message: `Disrupting Node: ${reason}`,
        component: ACTOR,
      },
      ACTOR,
    );
    this.startTermination(nodeName, reason);
    return 'started';
  }

  /** The interruption controller got a spot warning for this node's instance. */
  spotInterrupted(nodeName: string): void {
    const node = this.ctx.api.tryGet<Node>('nodes', undefined, nodeName);
    if (!node || this.draining.has(nodeName)) return;
    const message = 'Spot interruption warning was triggered';
    this.ctx.events.record(
      node,
      { type: 'Warning', reason: 'SpotInterrupted', message, component: ACTOR },
      ACTOR,
    );
    for (const pod of this.podsOn(nodeName)) {
      if (!isTerminal(pod))
        this.ctx.events.record(
          pod,
          { type: 'Warning', reason: 'SpotInterrupted', message, component: ACTOR },
          ACTOR,
        );
    }
    this.ctx.events.record(
      node,
      {
        type: 'Normal',
        reason: 'TerminatingOnInterruption',
        message: 'Interruption triggered termination for the NodeClaim',
        component: ACTOR,
      },
      ACTOR,
    );
    this.startTermination(nodeName, 'Forceful Termination');
  }

  /** An instance vanished under a node Karpenter manages: the node object goes. */
  instanceGone(instance: Instance): void {
    if (!instance.nodeName) return;
    this.draining.delete(instance.nodeName);
    try {
      this.ctx.api.delete(ACTOR, 'nodes', undefined, instance.nodeName);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }

  private startTermination(nodeName: string, evictionReason: string): void {
    if (this.draining.has(nodeName)) return;
    this.draining.set(nodeName, evictionReason);
    const now = this.ctx.clock.now();
    this.ctx.api.modify<Node>(ACTOR, 'nodes', undefined, nodeName, (n) => {
      const taints = (n.spec.taints ?? []).filter((t) => t.key !== DISRUPTED_TAINT);
      taints.push({ key: DISRUPTED_TAINT, effect: 'NoSchedule', timeAdded: isoTime(now) });
      n.spec.taints = taints;
    });
    this.drain(nodeName);
  }

  private drain(nodeName: string): void {
    const reason = this.draining.get(nodeName);
    if (reason === undefined) return;
    const { api } = this.ctx;
    if (!api.tryGet('nodes', undefined, nodeName)) {
      this.draining.delete(nodeName);
      return;
    }
    const live = this.podsOn(nodeName).filter((p) => !isTerminal(p));
    let retryEviction = false;
    for (const pod of live) {
      if (pod.metadata.deletionTimestamp) continue;
      try {
        api.evict(ACTOR, pod.metadata.namespace as string, pod.metadata.name as string, {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace },
        });
        this.ctx.events.record(
          pod,
          {
            type: 'Normal',
            reason: 'Evicted',
            message: `Evicted pod: ${reason}`,
            component: ACTOR,
          },
          ACTOR,
        );
      } catch (e) {
        if (e instanceof ApiError && e.code === 429) {
          retryEviction = true;
          continue;
        }
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    if (live.length === 0) {
      this.ctx.log('karpenter', 'deleted node', { node: nodeName, reason });
      this.draining.delete(nodeName);
      try {
        api.delete(ACTOR, 'nodes', undefined, nodeName);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
      this.hooks.terminateInstance(nodeName);
      return;
    }
    this.ctx.clock.after(
      retryEviction ? this.ctx.timings.evictionRetryMs : 1_000,
      `karpenter drain ${nodeName}`,
      () => this.drain(nodeName),
    );
  }

  /** Provisioner: one node at a time for pods that fit nowhere. */
  unschedulable(): void {
    if (!this.provisioning || this.launching) return;
    this.launching = true;
    this.ctx.clock.after(this.ctx.timings.nodeLaunchMs, 'karpenter launch', () => {
      this.launching = false;
      this.hooks.launchNode();
    });
  }

  private podsOn(nodeName: string): Pod[] {
    return this.ctx.api.all<Pod>('pods').filter((p) => p.spec.nodeName === nodeName);
  }
}
