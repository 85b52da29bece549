import type { Ec2Event, Node } from '../model/cluster-facts.js';
import type { NodeSignal, NodeWarningKind } from '../model/loss.js';

const NTH_TAINT_PREFIX = 'aws-node-termination-handler/';

function taintKind(key: string): NodeWarningKind | null {
  if (key === 'karpenter.sh/disrupted' || key === 'karpenter.sh/disruption')
    return 'karpenter-disruption';
  if (key === `${NTH_TAINT_PREFIX}spot-itn`) return 'spot-interruption-warning';
  if (key === `${NTH_TAINT_PREFIX}rebalance-recommendation`) return null;
  if (key.startsWith(NTH_TAINT_PREFIX)) return 'nth-drain';
  if (key === 'node.kubernetes.io/out-of-service') return 'node-gone';
  if (key === 'node.kubernetes.io/unreachable') return 'node-not-ready';
  return null;
}

/** A node object's own state: NotReady/Unknown, being deleted, or tainted for disruption. */
export function classifyNode(node: Node, observedAt: number): NodeSignal[] {
  const base = { cluster: node.cluster, nodeName: node.name, instanceId: node.instanceId };
  const out: NodeSignal[] = [];
  if (node.deletionTimestamp !== null)
    out.push({
      ...base,
      kind: 'node-gone',
      signal: { source: 'node-status', detail: 'node has a deletionTimestamp' },
      at: node.deletionTimestamp,
    });
  const ready = node.conditions.find((c) => c.type === 'Ready');
  if (ready && ready.status !== 'True')
    out.push({
      ...base,
      kind: 'node-not-ready',
      signal: {
        source: 'node-status',
        detail: `Ready=${ready.status} ${ready.reason ?? ''}`.trim(),
      },
      at: ready.lastTransitionTime ?? observedAt,
    });
  for (const t of node.taints) {
    const kind = taintKind(t.key);
    if (kind && !out.some((s) => s.kind === kind))
      out.push({
        ...base,
        kind,
        signal: { source: 'node-status', detail: `taint ${t.key}:${t.effect}` },
        at: observedAt,
      });
  }
  return out;
}

const STOPPING = new Set(['stopping', 'shutting-down']);
const GONE = new Set(['stopped', 'terminated']);

/** EC2 events name an instance; correlate maps it to a node through `spec.providerID`. */
export function classifyEc2Event(ev: Ec2Event): NodeSignal | null {
  const base = { cluster: null, nodeName: null, instanceId: ev.instanceId, at: ev.at };
  if (ev.kind === 'ec2-spot-interruption-warning')
    return {
      ...base,
      kind: 'spot-interruption-warning',
      signal: { source: 'ec2-event', detail: `spot interruption warning (${ev.instanceAction})` },
    };
  const kind: NodeWarningKind | null = STOPPING.has(ev.state)
    ? 'instance-terminating'
    : GONE.has(ev.state)
      ? 'node-gone'
      : null;
  if (!kind) return null;
  return { ...base, kind, signal: { source: 'ec2-event', detail: `instance state ${ev.state}` } };
}
