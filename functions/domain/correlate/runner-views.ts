import type { EphemeralRunnerJobFields } from '../model/cluster-facts.js';
import type { ErJobCacheEntry, Facts } from '../model/facts.js';
import { runKey, type Correlation } from './correlation.js';
import { arcVersionOf, isArcOwned, isRunnerPod, scaleSetOf } from './runner-guard.js';
import { emptyRunnerView, type RunnerView } from './runner-view.js';

/** Runner views by `cluster/namespace/name`. */
export type ViewsByKey = Map<string, RunnerView>;

export const viewKey = (cluster: string, namespace: string, name: string): string =>
  `${cluster}/${namespace}/${name}`;

/** Add `item` to the list under `key`. */
export function pushTo<K, T>(map: Map<K, T[]>, key: K, item: T): void {
  const list = map.get(key);
  if (list) list.push(item);
  else map.set(key, [item]);
}

/**
 * Step 1: one view per runner anything in the facts names (its pod, EphemeralRunner, cached job
 * fields, stored losses and warnings), with those objects on it, and its cached job fields by key.
 */
export function gatherViews(facts: Facts): {
  views: ViewsByKey;
  cached: Map<string, ErJobCacheEntry>;
} {
  const views: ViewsByKey = new Map();
  const view = (cluster: string, namespace: string, name: string): RunnerView => {
    const key = viewKey(cluster, namespace, name);
    const found = views.get(key);
    if (found) return found;
    const made = emptyRunnerView(cluster, namespace, name);
    views.set(key, made);
    return made;
  };
  for (const p of facts.pods) view(p.cluster, p.metadata.namespace, p.metadata.name).pod = p;
  for (const er of facts.ephemeralRunners)
    view(er.cluster, er.metadata.namespace, er.metadata.name).er = er;
  const cached = new Map<string, ErJobCacheEntry>();
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
  return { views, cached };
}

const hasJobFields = (
  f: EphemeralRunnerJobFields | null | undefined,
): f is EphemeralRunnerJobFields =>
  Boolean(f && (f.jobId || f.jobRepositoryName || f.workflowRunId));

/** The ARC version label of a runner's EphemeralRunner or pod. */
const arcVersionOfRunner = (v: RunnerView) =>
  (v.er && arcVersionOf(v.er.metadata)) ?? (v.pod && arcVersionOf(v.pod.metadata)) ?? null;

/**
 * Step 2: a runner's own identity: its scale set, whether it is ARC's (some evidence, and nothing
 * present contradicts it), its ARC generation, the job its EphemeralRunner (or the cache) names,
 * and its GitHub runner id.
 */
export function identify(v: RunnerView, cache: ErJobCacheEntry | undefined): void {
  const { pod, er } = v;
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
  const version = arcVersionOfRunner(v);
  // ARC ≤ 0.11 (bool `failures`, or its version label); ARC ≥ 0.15 by its version label.
  v.legacyArc =
    v.er?.failuresShape === 'bool' || (version !== null && version[0] === 0 && version[1] < 12);
  v.arcDeletesKilled = version !== null && (version[0] > 0 || version[1] >= 15);
  v.jobFields = hasJobFields(er?.job) ? er.job : hasJobFields(cache?.job) ? cache.job : null;
  v.runnerId = er?.runnerId ?? cache?.runnerId ?? null;
  v.jobSeenAt = cache?.seenAt ?? null;
}

/** Step 3: the indexes jobs are joined by: name (candidates only), runner id, ER job fields. */
export function indexViews(
  views: Iterable<RunnerView>,
): Pick<Correlation, 'byName' | 'byRunnerId' | 'byErRun'> {
  const byName = new Map<string, RunnerView[]>();
  const byRunnerId = new Map<number, RunnerView[]>();
  const byErRun = new Map<string, RunnerView[]>();
  for (const v of views) {
    pushTo(byName, v.name, v);
    if (v.runnerId !== null) pushTo(byRunnerId, v.runnerId, v);
    const f = v.jobFields;
    if (f?.jobRepositoryName && f.workflowRunId !== null)
      pushTo(byErRun, runKey(f.jobRepositoryName, f.workflowRunId), v);
  }
  return { byName, byRunnerId, byErRun };
}
