import { attributeEviction } from '../classify/attribute-eviction.js';
import { classifyEphemeralRunner, classifyPod } from '../classify/classify-pod.js';
import { classifyFinishedRunner } from '../classify/classify-finished-runner.js';
import { classifyOfflineRunner, classifyRecreatedPod } from '../classify/classify-recreated-pod.js';
import type {
  EphemeralRunner,
  EphemeralRunnerJobFields,
  Node,
  Pod,
} from '../model/cluster-facts.js';
import { runKey, type Correlation } from './correlation.js';
import { WARNING_TTL_MS } from '../classify/current-signal.js';
import type { Facts, JobRecord } from '../model/facts.js';
import { isoTime } from '../model/iso-time.js';
import { lossRank } from '../classify/loss-rank.js';
import { NODE_DOWN_KINDS, type Loss, type NodeSignal } from '../model/loss.js';
import { arcVersionOf, isArcOwned, isRunnerPod, scaleSetOf } from './runner-guard.js';
import { jobRunnerView } from './runner-of-job.js';
import { rememberedRunners, signalsOnNode } from './runners-on-nodes.js';
import type { RunnerView } from './runner-view.js';

export type { Correlation } from './correlation.js';
export { runKey } from './correlation.js';
export type { RunnerView } from './runner-view.js';
export { runnerOfJob, runnerSetPrefix, runnersForJob, runnersOnInstance } from './runner-of-job.js';

const viewKey = (cluster: string, namespace: string, name: string) =>
  `${cluster}/${namespace}/${name}`;

function isLegacy(er: EphemeralRunner | null, pod: Pod | null): boolean {
  if (er?.failuresShape === 'bool') return true;
  const v = (er && arcVersionOf(er.metadata)) ?? (pod && arcVersionOf(pod.metadata));
  return v !== null && v[0] === 0 && v[1] < 12;
}

const hasJobFields = (
  f: EphemeralRunnerJobFields | null | undefined,
): f is EphemeralRunnerJobFields =>
  Boolean(f && (f.jobId || f.jobRepositoryName || f.workflowRunId));

function nodeLoss(view: RunnerView, s: NodeSignal): Loss {
  return {
    cluster: view.cluster,
    namespace: view.namespace,
    runnerName: view.name,
    podUid: view.pod?.metadata.uid ?? null,
    nodeName: view.nodeName,
    scaleSet: view.scaleSet,
    ownedByArc: view.pod ? isRunnerPod(view.pod.metadata) : null,
    cause: s.kind === 'node-gone' ? { kind: 'pod-gc' } : { kind: 'node-not-ready' },
    signal: s.signal,
    at: s.at,
  };
}

function runningAndReady(pod: Pod): boolean {
  return (
    pod.phase === 'Running' &&
    pod.metadata.deletionTimestamp === null &&
    pod.conditions.some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

function nodeIsDown(node: Node | null): boolean {
  if (!node) return false;
  const ready = node.conditions.find((c) => c.type === 'Ready');
  return node.deletionTimestamp !== null || (ready !== undefined && ready.status !== 'True');
}

/**
 * Join jobs, runners, pods, EphemeralRunners and nodes (DESIGN.md §3): a runner's objects by
 * cluster, namespace and name; a job to its runner by identity (runner id, then ER job fields,
 * then a name only one proven ARC runner has: runner-of-job.ts); by node through providerID; by
 * scale set through the jobs' labels.
 */
export function correlate(facts: Facts, now: number): Correlation {
  const views = new Map<string, RunnerView>();
  const view = (cluster: string, namespace: string, name: string): RunnerView => {
    const k = viewKey(cluster, namespace, name);
    let v = views.get(k);
    if (!v) {
      v = {
        cluster,
        namespace,
        name,
        scaleSet: null,
        pod: null,
        er: null,
        node: null,
        nodeName: null,
        podMissingSince: null,
        arcOwned: false,
        legacyArc: false,
        jobFields: null,
        jobSeenAt: null,
        arcWontRecover: false,
        runnerId: null,
        jobs: [],
        busy: false,
        losses: [],
        loss: null,
        lostAt: null,
        nodeSignals: [],
        warnings: [],
      };
      views.set(k, v);
    }
    return v;
  };

  for (const p of facts.pods) view(p.cluster, p.metadata.namespace, p.metadata.name).pod = p;
  for (const er of facts.ephemeralRunners)
    view(er.cluster, er.metadata.namespace, er.metadata.name).er = er;
  const cached = new Map<string, Facts['erJobCache'][number]>();
  for (const c of facts.erJobCache) {
    cached.set(viewKey(c.cluster, c.namespace, c.runnerName), c);
    view(c.cluster, c.namespace, c.runnerName);
  }
  for (const l of facts.losses) view(l.cluster, l.namespace, l.runnerName).losses.push(l);
  for (const w of facts.runnerWarnings) view(w.cluster, w.namespace, w.runnerName).warnings.push(w);
  for (const m of facts.missingPods) {
    const v = views.get(viewKey(m.cluster, m.namespace, m.name));
    if (v) v.podMissingSince = m.since;
  }

  // A runner's own registration is the one with its GitHub runner id, whatever else has its name.
  const registrations = new Map(facts.registrations.map((r) => [r.id, r]));
  const push = <K, T>(m: Map<K, T[]>, k: K, item: T) => {
    const list = m.get(k);
    if (list) list.push(item);
    else m.set(k, [item]);
  };

  const registrationOf = (er: EphemeralRunner) => {
    const r = er.runnerId === null ? undefined : registrations.get(er.runnerId);
    return r?.name === er.metadata.name ? r : undefined;
  };

  // The runner's own identity first: what it is, whose it is, which job its ER names.
  const byName = new Map<string, RunnerView[]>();
  const byRunnerId = new Map<number, RunnerView[]>();
  const byErRun = new Map<string, RunnerView[]>();
  for (const v of views.values()) {
    const { pod, er } = v;
    const cache = cached.get(viewKey(v.cluster, v.namespace, v.name));
    v.scaleSet =
      (pod && scaleSetOf(pod.metadata)) ??
      (er && scaleSetOf(er.metadata)) ??
      cache?.scaleSet ??
      v.losses.find((l) => l.scaleSet)?.scaleSet ??
      null;
    const evidence = Boolean(pod || er || cache || v.losses.some((l) => l.ownedByArc === true));
    v.arcOwned =
      evidence &&
      (!pod || isRunnerPod(pod.metadata)) &&
      (!er || isArcOwned(er.metadata)) &&
      !v.losses.some((l) => l.ownedByArc === false);
    v.legacyArc = isLegacy(er, pod);
    v.jobFields = hasJobFields(er?.job) ? er.job : hasJobFields(cache?.job) ? cache.job : null;
    v.runnerId = er?.runnerId ?? cache?.runnerId ?? null;
    v.jobSeenAt = cache?.seenAt ?? null;
    push(byName, v.name, v);
    if (v.runnerId !== null) push(byRunnerId, v.runnerId, v);
    const f = v.jobFields;
    if (f?.jobRepositoryName && f.workflowRunId !== null)
      push(byErRun, runKey(f.jobRepositoryName, f.workflowRunId), v);
  }

  // Then each job to the one runner it ran on, by identity (runner-of-job.ts).
  const jobsByRun = new Map<string, JobRecord[]>();
  const index = { byName, byRunnerId, byErRun };
  for (const j of facts.jobs) {
    push(jobsByRun, runKey(j.repository.fullName, j.job.runId), j);
    jobRunnerView(index, j)?.jobs.push(j);
  }

  for (const v of views.values()) {
    const { pod, er } = v;
    const cache = cached.get(viewKey(v.cluster, v.namespace, v.name));
    v.busy = v.jobFields !== null || v.jobs.length > 0;

    // An ephemeral runner runs one job: once its job has completed, or its job fields were seen
    // before a loss, its JIT config is spent and no re-created pod of it can work.
    const jobSeenAt = v.jobSeenAt;
    const jobDone = v.jobs.some((j) => j.job.runnerName === v.name && j.job.status === 'completed');
    const tookJobBefore = (l: Loss) =>
      jobDone || (jobSeenAt !== null && l.at !== null && jobSeenAt <= l.at);

    // Losses about an older pod of the same name no longer apply once ARC has re-created it,
    // unless the re-created pod cannot work: the runner had taken a job before (spent JIT config,
    // #4588), or ARC ≤ 0.11 re-created an evicted idle runner with the same JIT config.
    const podUid = pod?.metadata.uid;
    const podCreated = pod?.metadata.creationTimestamp ?? null;
    // Without a uid on the loss, a pod created after it is a newer pod.
    const samePod = (l: Loss) =>
      l.podUid ? l.podUid === podUid : podCreated === null || l.at === null || podCreated <= l.at;
    v.losses = v.losses.filter(
      (l) => !pod || samePod(l) || tookJobBefore(l) || (v.legacyArc && !v.busy),
    );
    // Events are hints, the live objects are the truth: a pod that is Running and Ready on a
    // node that is Ready (or not known to be down) was not lost, whatever an event says of it.
    const nodeOfPod = pod?.nodeName
      ? (facts.nodes.find((n) => n.cluster === v.cluster && n.name === pod.nodeName) ?? null)
      : null;
    if (pod && runningAndReady(pod) && !nodeIsDown(nodeOfPod))
      v.losses = v.losses.filter((l) => !samePod(l));
    const fromPod = pod && classifyPod(pod);
    if (fromPod) v.losses.push(fromPod);
    const fromEr = er && classifyEphemeralRunner(er);
    if (fromEr) v.losses.push(fromEr);
    const recreated =
      er &&
      pod &&
      (classifyRecreatedPod(er, pod, v.podMissingSince, cache?.seenAt ?? null) ??
        (v.busy ? null : classifyOfflineRunner(er, pod, registrationOf(er), now)) ??
        classifyFinishedRunner(er, pod, v.jobs, now));
    if (recreated) v.losses.push(recreated);
    if (er && !pod && v.podMissingSince !== null)
      v.losses.push({
        cluster: v.cluster,
        namespace: v.namespace,
        runnerName: v.name,
        podUid: null,
        nodeName: null,
        scaleSet: v.scaleSet,
        ownedByArc: isArcOwned(er.metadata),
        cause: { kind: 'pod-not-found' },
        signal: {
          source: 'listing',
          detail: `pod ${v.name} not found since ${isoTime(v.podMissingSince)}`,
        },
        at: v.podMissingSince,
      });

    v.nodeName = pod?.nodeName ?? v.losses.find((l) => l.nodeName)?.nodeName ?? null;
    v.node = facts.nodes.find((n) => n.cluster === v.cluster && n.name === v.nodeName) ?? null;
    v.nodeSignals = signalsOnNode(facts, v.cluster, v.nodeName, v.node, now);
    v.warnings = v.warnings.filter((w) => w.at === null || now - w.at <= WARNING_TTL_MS);
    const podAlive = pod && pod.phase !== 'Failed' && pod.phase !== 'Succeeded';
    if (podAlive)
      for (const s of v.nodeSignals)
        if (NODE_DOWN_KINDS.includes(s.kind)) v.losses.push(nodeLoss(v, s));
    v.losses = v.losses.map((l) => attributeEviction(l, v.nodeSignals));
    v.losses.sort((a, b) => lossRank(a) - lossRank(b) || (a.at ?? 0) - (b.at ?? 0));
    v.loss = v.losses[0] ?? null;
    const times = v.losses.map((l) => l.at).filter((t): t is number => t !== null);
    v.lostAt = v.loss ? (times.length > 0 ? Math.min(...times) : null) : null;
    v.arcWontRecover = v.legacyArc || v.losses.some(tookJobBefore);
  }

  const runners = [...views.values()];
  const byScaleSet = new Map<string, RunnerView[]>();
  for (const v of runners) if (v.scaleSet) push(byScaleSet, v.scaleSet.toLowerCase(), v);
  const remembered = rememberedRunners(facts, now);
  return { runners, remembered, byName, byRunnerId, byErRun, byScaleSet, jobsByRun };
}
