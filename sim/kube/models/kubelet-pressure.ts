/**
 * The kubelet's own kills under node pressure: hard eviction of a pod (Failed/Evicted with the
 * eviction manager's message and annotations), rejection at admission of a pod that landed just
 * before the pressure taint, and the node's pressure conditions and NoSchedule taints, which
 * clear after the eviction-pressure-transition-period.
 */
import type { TimerHandle } from '../../clock.js';
import { setCondition } from '../api/kube-api.js';
import { isoTime, type Node, type Pod } from '../types.js';
import { KUBELET, type KubeletState } from './kubelet-state.js';
import {
  EVICTION_SIGNALS,
  evictionMessage,
  pressureShape,
  type EvictionSignal,
  type PressureCondition,
} from './node-conditions.js';
import { markKilledByKubelet } from './pod-status.js';

/** The kubelet's default eviction-pressure-transition-period. */
const PRESSURE_TRANSITION_MS = 5 * 60_000;

export class NodePressure {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly state: KubeletState) {}

  /**
   * Node-pressure (hard) eviction of one pod: killed at once, Failed/Evicted, Warning event.
   * The node reports the pressure condition (and its NoSchedule taint) for `pressureMs`
   * (the kubelet's eviction-pressure-transition-period, 5 min by default; 0 = not at all).
   */
  evict(
    ns: string,
    name: string,
    signal: EvictionSignal,
    pressureMs = PRESSURE_TRANSITION_MS,
  ): void {
    const { pod, rt } = this.state.runtime(ns, name);
    const s = EVICTION_SIGNALS[signal];
    const node = pod.spec.nodeName as string;
    this.pressureFor(node, s.condition, pressureMs);
    const runner = pod.spec.containers.find((c) => c.name === 'runner') ?? pod.spec.containers[0];
    const message = evictionMessage(signal, runner?.name);
    const now = this.state.ctx.clock.now();
    const apply = (p: Pod) => markKilledByKubelet(p, 'Evicted', message, now);
    this.state.record(pod, node, {
      type: 'Warning',
      reason: 'Evicted',
      message,
      ...(s.usage && runner
        ? {
            annotations: {
              offending_containers: runner.name,
              offending_containers_usage: s.usage,
              starved_resource: s.resource,
            },
          }
        : {}),
    });
    this.state.stopWith(pod, rt, apply, () => rt?.process?.kill(137, 'Error'));
  }

  /**
   * Admission rejection (`Pod was rejected: The node had condition: [DiskPressure]. `): the pod
   * landed on the node just before its pressure taint. The node keeps the condition for
   * `pressureMs` (default 5 min; 0 = none).
   */
  rejectAtAdmission(
    ns: string,
    name: string,
    condition: PressureCondition = 'DiskPressure',
    pressureMs = PRESSURE_TRANSITION_MS,
  ): void {
    const { pod, rt } = this.state.runtime(ns, name);
    if (pod.spec.nodeName) this.pressureFor(pod.spec.nodeName, condition, pressureMs);
    if (rt) {
      rt.process?.kill();
      this.state.drop(rt);
    }
    const msg = `The node had condition: [${condition}]. `;
    this.state.reject(pod, 'Evicted', `Pod was rejected: ${msg}`, msg);
    // A rejected pod never ran: no container statuses (what ARC <= 0.11 waits on forever).
    this.state.writeStatus(ns, name, (p) => {
      if (!rt?.started && p.status) delete p.status.containerStatuses;
    });
  }

  /** Sets a pressure condition for `ms`, then clears it (0 = leave the node alone). */
  private pressureFor(node: string, condition: PressureCondition, ms: number): void {
    if (ms <= 0) return;
    this.setPressure(node, condition, true);
    const key = `${node}|${condition}`;
    const { clock, api } = this.state.ctx;
    clock.cancel(this.timers.get(key));
    this.timers.set(
      key,
      clock.after(ms, `pressure ends ${key}`, () => {
        this.timers.delete(key);
        if (this.state.nodes.has(node) && api.tryGet('nodes', undefined, node))
          this.setPressure(node, condition, false);
      }),
    );
  }

  /** The node's pressure condition (with its event) and the matching NoSchedule taint. */
  setPressure(nodeName: string, condition: PressureCondition, on: boolean): void {
    const agent = this.state.nodes.get(nodeName);
    if (!agent) throw new Error(`unknown node ${nodeName}`);
    if (on) agent.pressure.add(condition);
    else agent.pressure.delete(condition);
    const { api, clock, events } = this.state.ctx;
    const now = clock.now();
    const shape = pressureShape(condition, on);
    const node = api.tryGet<Node>('nodes', undefined, nodeName);
    if (node) {
      const message = `Node ${nodeName} status is now: ${shape.event}`;
      events.record(
        node,
        { type: 'Normal', reason: shape.event, message, component: KUBELET, host: nodeName },
        KUBELET,
      );
    }
    api.modify<Node>(
      KUBELET,
      'nodes',
      undefined,
      nodeName,
      (n) =>
        setCondition(
          n,
          {
            type: condition,
            status: on ? 'True' : 'False',
            reason: shape.reason,
            message: shape.message,
          },
          now,
        ),
      { subresource: 'status' },
    );
    api.modify<Node>('node-lifecycle-controller', 'nodes', undefined, nodeName, (n) => {
      const taints = (n.spec.taints ?? []).filter((t) => t.key !== shape.taint);
      if (on) taints.push({ key: shape.taint, effect: 'NoSchedule', timeAdded: isoTime(now) });
      n.spec.taints = taints;
      if (taints.length === 0) delete n.spec.taints;
    });
  }
}
