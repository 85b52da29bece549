import type { EphemeralRunner } from '../domain/cluster-facts.js';
import type { Facts } from '../domain/facts.js';
import type { ClusterGateways } from '../ports/cluster-gateway.js';
import type { FactsStore, StoredFacts } from '../ports/facts-store.js';

/**
 * One snapshot for decide(): what the store remembers plus what every configured cluster shows
 * now (runners of all namespaces; the policy's allowlists apply in decide). Job fields on
 * EphemeralRunners are cached the first time they appear, since ARC may delete the object
 * quickly; pods missing under a live EphemeralRunner are remembered from first sight.
 */
export async function gatherFacts(
  stored: StoredFacts,
  store: FactsStore,
  clusters: ClusterGateways,
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

  for (const cluster of clusters.clusters()) {
    const gateway = await clusters.forCluster(cluster);
    const [nodes, listing] = await Promise.all([gateway.listNodes(), gateway.listRunners()]);
    facts.nodes.push(...nodes);
    facts.ephemeralRunners.push(...listing.ephemeralRunners);
    facts.pods.push(...listing.pods);
    const namespaces = new Set([
      ...listing.ephemeralRunners.map((er) => er.metadata.namespace),
      ...listing.pods.map((p) => p.metadata.namespace),
    ]);
    for (const namespace of namespaces) facts.listings.push({ cluster, namespace, at: now });
    const podNames = new Set(listing.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
    for (const er of listing.ephemeralRunners) {
      const { name, namespace } = er.metadata;
      if (er.job.workflowRunId !== null || er.job.jobId !== null) {
        const known = facts.erJobCache.some(
          (e) => e.cluster === cluster && e.namespace === namespace && e.runnerName === name,
        );
        if (!known) {
          const entry = {
            cluster,
            namespace,
            runnerName: name,
            scaleSet: er.metadata.labels['actions.github.com/scale-set-name'] ?? null,
            runnerId: er.runnerId,
            job: er.job,
            seenAt: now,
          };
          await store.cacheErJob(entry, now);
          facts.erJobCache = [...facts.erJobCache, entry];
        }
      }
      const missing = facts.missingPods.find(
        (m) => m.cluster === cluster && m.namespace === namespace && m.name === name,
      );
      // A record stays when the pod reappears: a pod re-created after its runner took a job is
      // how ARC #4588 shows. Records go with their EphemeralRunner (below) or their TTL.
      if (
        !podNames.has(`${namespace}/${name}`) &&
        !missing &&
        er.metadata.deletionTimestamp === null &&
        hadItsPod(er, now)
      ) {
        const pod = { cluster, namespace, name, since: now };
        await store.recordMissingPod(pod, now);
        facts.missingPods = [...facts.missingPods, pod];
      }
    }
    const runners = new Set(
      listing.ephemeralRunners.map((er) => `${er.metadata.namespace}/${er.metadata.name}`),
    );
    for (const m of facts.missingPods.filter((m) => m.cluster === cluster)) {
      if (runners.has(`${m.namespace}/${m.name}`)) continue;
      await store.clearMissingPod(cluster, m.namespace, m.name);
      facts.missingPods = facts.missingPods.filter((x) => x !== m);
    }
  }
  return facts;
}

/**
 * A fresh EphemeralRunner has no pod yet while ARC creates it: its pod is missing only once the
 * runner had a live one (ARC copies the pod's phase into its status) or, with no phase at all,
 * once it is past ARC's creation window. A Failed or Succeeded runner is explained by its status.
 */
const POD_CREATION_WINDOW_MS = 60_000;

function hadItsPod(er: EphemeralRunner, now: number): boolean {
  const created = er.metadata.creationTimestamp ?? now;
  if (er.phase === 'Pending' || er.phase === 'Running') return true;
  return er.phase === null && now - created >= POD_CREATION_WINDOW_MS;
}
