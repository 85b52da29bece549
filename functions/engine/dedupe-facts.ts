import type { Facts } from '../domain/model/facts.js';

/** Keeps the last of the items that share a key. */
function uniqueBy<T>(xs: T[], key: (x: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const x of xs) seen.set(key(x), x);
  return [...seen.values()];
}

/**
 * The same item read through two indexes counts once. A slice reads a job through its runner's
 * name and again through its run, an action through its runner and its run, a registration per
 * owner; the sweep's namespace slice as much as an event's. Decided twice over, one job is two
 * dead jobs of its run: "job 1, 1" in the cancel's reason and target.
 */
export function dedupeFacts(f: Facts): Facts {
  return {
    ...f,
    jobs: uniqueBy(f.jobs, (j) => `${j.repository.fullName}#${j.job.jobId}`),
    runs: uniqueBy(f.runs, (r) => `${r.repository.fullName}#${r.run.runId}#${r.run.runAttempt}`),
    actions: uniqueBy(f.actions, (a) => a.key),
    losses: uniqueBy(f.losses, (l) =>
      [l.cluster, l.namespace, l.runnerName, l.cause.kind, l.podUid ?? ''].join('#'),
    ),
    erJobCache: uniqueBy(f.erJobCache, (e) => `${e.cluster}/${e.namespace}/${e.runnerName}`),
    missingPods: uniqueBy(f.missingPods, (m) => `${m.cluster}/${m.namespace}/${m.name}`),
    runnerWarnings: uniqueBy(f.runnerWarnings, (w) =>
      [w.cluster, w.namespace, w.runnerName, w.kind].join('#'),
    ),
    nodeSignals: uniqueBy(f.nodeSignals, (s) =>
      [s.cluster ?? '', s.nodeName ?? '', s.instanceId ?? '', s.kind].join('#'),
    ),
    registrations: uniqueBy(f.registrations, (r) => `${JSON.stringify(r.owner)}#${r.id}`),
    breakers: uniqueBy(f.breakers, (b) => `${b.cluster}#${b.scaleSet ?? '*'}`),
    nodes: uniqueBy(f.nodes, (n) => `${n.cluster}/${n.name}`),
    pods: uniqueBy(f.pods, (p) => `${p.cluster}/${p.metadata.namespace}/${p.metadata.name}`),
    ephemeralRunners: uniqueBy(
      f.ephemeralRunners,
      (e) => `${e.cluster}/${e.metadata.namespace}/${e.metadata.name}`,
    ),
  };
}
