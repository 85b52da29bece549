import { classifyNode } from '../classify/classify-node.js';
import { isCurrentSignal } from '../classify/current-signal.js';
import type { Node } from '../model/cluster-facts.js';
import type { Facts, JobRecord, RunnerOnNode } from '../model/facts.js';
import type { NodeSignal } from '../model/loss.js';

/**
 * A runner on a signalled node that this slice knows from the store only: the sweep proved it
 * ARC's, and no object of it was read now. Rules decide from it what needs no live object (mark
 * a busy runner at risk); anything destructive first asks for its live objects.
 */
export interface RememberedRunner {
  runner: RunnerOnNode;
  node: Node | null;
  nodeSignals: NodeSignal[];
  /** Its jobs in progress: by GitHub runner id, or by name where neither side has an id yet. */
  jobsInProgress: JobRecord[];
}

/** The current signals about one node: stored ones that still hold, and the node object's own. */
export function signalsOnNode(
  facts: Pick<Facts, 'nodeSignals'>,
  cluster: string,
  nodeName: string | null,
  node: Node | null,
  now: number,
): NodeSignal[] {
  const signals = [
    ...facts.nodeSignals.filter((s) => isCurrentSignal(s, node, now)),
    ...(node ? classifyNode(node, now) : []),
  ];
  return signals.filter(
    (s) =>
      (s.cluster === null || s.cluster === cluster) &&
      ((s.nodeName !== null && s.nodeName === nodeName) ||
        (s.instanceId !== null && node?.instanceId === s.instanceId)),
  );
}

function ranOn(job: JobRecord, r: RunnerOnNode): boolean {
  if (job.job.status !== 'in_progress') return false;
  if (r.runnerId !== null && job.job.runnerId !== null) return job.job.runnerId === r.runnerId;
  const labels = job.job.labels.map((l) => l.toLowerCase());
  return (
    job.job.runnerName === r.name &&
    r.scaleSet !== null &&
    labels.includes(r.scaleSet.toLowerCase())
  );
}

/**
 * The runners the store places on this slice's nodes, less those whose pod or EphemeralRunner
 * was read (the live objects outrank the memory) and those on a node with no current signal.
 */
export function rememberedRunners(facts: Facts, now: number): RememberedRunner[] {
  const key = (cluster: string, namespace: string, name: string) =>
    `${cluster}/${namespace}/${name}`;
  const read = new Set([
    ...facts.pods.map((p) => key(p.cluster, p.metadata.namespace, p.metadata.name)),
    ...facts.ephemeralRunners.map((e) => key(e.cluster, e.metadata.namespace, e.metadata.name)),
  ]);
  const out: RememberedRunner[] = [];
  for (const r of facts.runnersOnNodes) {
    if (read.has(key(r.cluster, r.namespace, r.name))) continue;
    const node = facts.nodes.find((n) => n.cluster === r.cluster && n.name === r.nodeName) ?? null;
    const nodeSignals = signalsOnNode(facts, r.cluster, r.nodeName, node, now);
    if (nodeSignals.length === 0) continue;
    const jobsInProgress = facts.jobs.filter((j) => ranOn(j, r));
    out.push({ runner: r, node, nodeSignals, jobsInProgress });
  }
  return out;
}
