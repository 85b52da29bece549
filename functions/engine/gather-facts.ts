import type { EphemeralRunner } from '../domain/cluster-facts.js';
import type { Facts } from '../domain/facts.js';
import type { Policy } from '../domain/policy.js';
import type { ClusterGateways } from '../ports/cluster-gateway.js';
import type { FactsStore, StoredFacts } from '../ports/facts-store.js';

/**
 * One snapshot for decide(): what the store remembers plus what the clusters show now. Job
 * fields on EphemeralRunners are cached the first time they appear, since ARC may delete the
 * object quickly; pods missing under a live EphemeralRunner are remembered from first sight.
 */
export async function gatherFacts(
  stored: StoredFacts,
  store: FactsStore,
  clusters: ClusterGateways,
  policy: Policy,
  now: number,
): Promise<Facts> {
  const facts: Facts = {
    pods: [],
    ephemeralRunners: [],
    nodes: [],
    listings: [],
    erJobCache: stored.erJobCache,
    missingPods: stored.missingPods,
    losses: stored.losses,
    nodeSignals: stored.nodeSignals,
    runnerWarnings: stored.runnerWarnings,
    jobs: stored.jobs,
    runs: stored.runs,
    registrations: stored.registrations,
    actions: stored.actions,
  };

  for (const [cluster, namespaces] of namespacesToList(stored, clusters, policy)) {
    const gateway = await clusters.forCluster(cluster);
    facts.nodes.push(...(await gateway.listNodes()));
    for (const namespace of namespaces) {
      const listing = await gateway.listRunners(namespace);
      facts.ephemeralRunners.push(...listing.ephemeralRunners);
      facts.pods.push(...listing.pods);
      facts.listings.push({ cluster, namespace, at: now });
      const podNames = new Set(listing.pods.map((p) => p.metadata.name));
      for (const er of listing.ephemeralRunners) {
        const name = er.metadata.name;
        if (er.job.workflowRunId !== null || er.job.jobId !== null) {
          const known = facts.erJobCache.some(
            (e) => e.cluster === cluster && e.namespace === namespace && e.runnerName === name,
          );
          const entry = {
            cluster,
            namespace,
            runnerName: name,
            scaleSet: er.metadata.labels['actions.github.com/scale-set-name'] ?? null,
            runnerId: er.runnerId,
            job: er.job,
            seenAt: now,
          };
          if (!known) {
            await store.cacheErJob(entry, now);
            facts.erJobCache = [...facts.erJobCache, entry];
          }
        }
        const missing = facts.missingPods.find(
          (m) => m.cluster === cluster && m.namespace === namespace && m.name === name,
        );
        if (podNames.has(name)) {
          if (missing) {
            await store.clearMissingPod(cluster, namespace, name);
            facts.missingPods = facts.missingPods.filter((m) => m !== missing);
          }
        } else if (!missing && er.metadata.deletionTimestamp === null && hadItsPod(er, now)) {
          const pod = { cluster, namespace, name, since: now };
          await store.recordMissingPod(pod, now);
          facts.missingPods = [...facts.missingPods, pod];
        }
      }
    }
  }
  return facts;
}

/**
 * A fresh EphemeralRunner has no pod yet while ARC creates it: its pod is missing only once the
 * runner had one (ARC copies the pod's phase into its status) or it is past ARC's creation window.
 */
const POD_CREATION_WINDOW_MS = 60_000;

function hadItsPod(er: EphemeralRunner, now: number): boolean {
  const created = er.metadata.creationTimestamp ?? now;
  return er.phase !== null || now - created >= POD_CREATION_WINDOW_MS;
}

/** Clusters and namespaces worth listing: those configured plus those facts point at. */
function namespacesToList(
  stored: StoredFacts,
  clusters: ClusterGateways,
  policy: Policy,
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (cluster: string | null, namespace: string | null) => {
    if (!cluster || !clusters.clusters().includes(cluster)) return;
    const set = out.get(cluster) ?? new Set<string>();
    if (namespace && !namespace.includes('*')) set.add(namespace);
    out.set(cluster, set);
  };
  for (const cluster of clusters.clusters()) {
    add(cluster, null);
    for (const entry of policy.allow.namespaces) {
      const [first, second] = entry.split('/');
      if (second === undefined) add(cluster, first ?? null);
      else if (first === cluster) add(cluster, second);
    }
  }
  for (const l of stored.losses) add(l.cluster, l.namespace);
  for (const w of stored.runnerWarnings) add(w.cluster, w.namespace);
  for (const e of stored.erJobCache) add(e.cluster, e.namespace);
  for (const m of stored.missingPods) add(m.cluster, m.namespace);
  return out;
}
