import { attributeEviction } from '../classify/attribute-eviction.js';
import { classifyFinishedRunner } from '../classify/classify-finished-runner.js';
import {
  classifyEphemeralRunner,
  classifyMissingPod,
  classifyPod,
} from '../classify/classify-pod.js';
import { classifyOfflineRunner, classifyRecreatedPod } from '../classify/classify-recreated-pod.js';
import { WARNING_TTL_MS } from '../classify/current-signal.js';
import { lossRank } from '../classify/loss-rank.js';
import { runnerLoss } from '../classify/runner-loss.js';
import type { Node, Pod } from '../model/cluster-facts.js';
import type { Facts, RunnerRegistration } from '../model/facts.js';
import { NODE_DOWN_KINDS, type Loss } from '../model/loss.js';
import { ms } from '../model/time.js';
import type { RunnerView } from './runner-view.js';
import { signalsOnNode } from './runners-on-nodes.js';

/**
 * Whether the runner had taken a job before this loss. An ephemeral runner runs one job: once its
 * job has completed (and it started before the loss), or its job fields were seen before the
 * loss, its JIT config is spent and no re-created pod of it can work. A loss before the job
 * started (a pod rejected, then re-created, which took the job) spent nothing.
 */
export function tookJobBefore(v: RunnerView): (l: Loss) => boolean {
  const doneStarts = v.jobs
    .filter((j) => j.job.runnerName === v.name && j.job.status === 'completed')
    .map((j) => ms(j.job.startedAt));
  const seen = v.jobSeenAt;
  return (l) =>
    doneStarts.some((started) => l.at === null || started === null || started <= l.at) ||
    (seen !== null && l.at !== null && seen <= l.at);
}

const runningAndReady = (pod: Pod): boolean =>
  pod.phase === 'Running' &&
  pod.metadata.deletionTimestamp === null &&
  pod.conditions.some((c) => c.type === 'Ready' && c.status === 'True');

function nodeIsDown(node: Node | null): boolean {
  if (!node) return false;
  const ready = node.conditions.find((c) => c.type === 'Ready');
  return node.deletionTimestamp !== null || (ready !== undefined && ready.status !== 'True');
}

/**
 * Step 5: the stored losses that still hold. Losses about an older pod of the same name no longer
 * apply once ARC has re-created it, unless the re-created pod cannot work: the runner had taken a
 * job before (spent JIT config, actions-runner-controller#4588), or ARC ≤ 0.11 re-created an
 * evicted idle runner with the same JIT config. And events are hints, the live objects the truth:
 * a pod Running and Ready on a node not known to be down was not lost, whatever an event says.
 */
export function keepCurrentLosses(v: RunnerView, nodes: readonly Node[]): Loss[] {
  const { pod } = v;
  if (!pod) return v.losses;
  const tookJob = tookJobBefore(v);
  const created = pod.metadata.creationTimestamp;
  // Without a uid on the loss, a pod created after it is a newer pod.
  const samePod = (l: Loss) =>
    l.podUid ? l.podUid === pod.metadata.uid : created === null || l.at === null || created <= l.at;
  const current = v.losses.filter((l) => samePod(l) || tookJob(l) || (v.legacyArc && !v.busy));
  const node = pod.nodeName
    ? (nodes.find((n) => n.cluster === v.cluster && n.name === pod.nodeName) ?? null)
    : null;
  return runningAndReady(pod) && !nodeIsDown(node) ? current.filter((l) => !samePod(l)) : current;
}

/**
 * Step 6: what the live objects say now: the pod's and the EphemeralRunner's own state, a pod
 * re-created on a spent JIT config, an idle runner whose registration never came online, a runner
 * that outlived its job, or a pod looked up and missing.
 */
export function lossesFromObjects(
  v: RunnerView,
  registrations: ReadonlyMap<number, RunnerRegistration>,
  now: number,
): Loss[] {
  const { pod, er } = v;
  // A runner's own registration is the one with its GitHub runner id, whatever else has its name.
  const own = er?.runnerId == null ? undefined : registrations.get(er.runnerId);
  const registration = own?.name === er?.metadata.name ? own : undefined;
  const found = [
    pod && classifyPod(pod),
    er && classifyEphemeralRunner(er),
    er &&
      pod &&
      (classifyRecreatedPod(er, pod, v.podMissingSince, v.jobSeenAt) ??
        (v.busy ? null : classifyOfflineRunner(er, pod, registration, now)) ??
        classifyFinishedRunner(er, pod, v.jobs, now)),
    er && !pod && v.podMissingSince !== null
      ? classifyMissingPod(er, v.podMissingSince, v.scaleSet)
      : null,
  ];
  return found.filter((l): l is Loss => Boolean(l));
}

/**
 * Step 7: the runner's node and what is known of it: the current signals about it, the runner's
 * own warnings still fresh, and, for a live pod on a node that is down, the loss that means.
 */
export function placeOnNode(v: RunnerView, facts: Facts, now: number): void {
  v.nodeName = v.pod?.nodeName ?? v.losses.find((l) => l.nodeName)?.nodeName ?? null;
  v.node = facts.nodes.find((n) => n.cluster === v.cluster && n.name === v.nodeName) ?? null;
  v.nodeSignals = signalsOnNode(facts, v.cluster, v.nodeName, v.node, now);
  v.warnings = v.warnings.filter((w) => w.at === null || now - w.at <= WARNING_TTL_MS);
  const podAlive = v.pod && v.pod.phase !== 'Failed' && v.pod.phase !== 'Succeeded';
  if (!podAlive) return;
  for (const s of v.nodeSignals)
    if (NODE_DOWN_KINDS.includes(s.kind))
      v.losses.push(
        runnerLoss(
          {
            cluster: v.cluster,
            namespace: v.namespace,
            runnerName: v.name,
            podUid: v.pod?.metadata.uid ?? null,
            nodeName: v.nodeName,
            scaleSet: v.scaleSet,
            cause: s.kind === 'node-gone' ? { kind: 'pod-gc' } : { kind: 'node-not-ready' },
            signal: s.signal,
            at: s.at,
          },
          { pod: v.pod?.metadata ?? null },
        ),
      );
}

/**
 * Step 8: the runner's main loss: evictions attributed to whoever warned of its node, the most
 * telling first (then the earliest), lost since the earliest, and whether ARC will not recover.
 */
export function rankLosses(v: RunnerView): void {
  v.losses = v.losses.map((l) => attributeEviction(l, v.nodeSignals));
  v.losses.sort((a, b) => lossRank(a) - lossRank(b) || (a.at ?? 0) - (b.at ?? 0));
  v.loss = v.losses[0] ?? null;
  const times = v.losses.map((l) => l.at).filter((t): t is number => t !== null);
  v.lostAt = v.loss ? (times.length > 0 ? Math.min(...times) : null) : null;
  v.arcWontRecover = v.legacyArc || v.losses.some(tookJobBefore(v));
}
