import type { EphemeralRunner, Node, Pod } from '../domain/model/cluster-facts.js';
import type { NodeSignal } from '../domain/model/loss.js';
import { emptyFacts, type Facts, type RunnerRegistration } from '../domain/model/facts.js';
import type { Policy } from '../domain/policy/policy.js';
import { runnerSetPrefix } from '../domain/correlate/runner-of-job.js';
import { ms } from '../domain/model/time.js';
import { STUCK_AFTER_JOB_MS } from '../domain/classify/classify-finished-runner.js';
import { scaleSetOf } from '../domain/correlate/runner-guard.js';
import type { ClusterGateway, FollowedRunners, RunnerListing } from '../ports/cluster-gateway.js';
import type { WatchCursor } from '../ports/watch-cursors.js';
import {
  RUNNER_SET_KEY,
  type FactsStore,
  type KnownOwner,
  type RunnerRef,
  type StoreRead,
} from '../ports/facts-store.js';
import {
  addFacts,
  followRunsOf,
  noteRunnerObjects,
  readBreakers,
  type Slice,
} from './gather-slice.js';
import { republishUnpublishedDeliveries } from '../ingress/republish-unpublished.js';
import { explainAction } from './explain-action.js';
import { discoverQueuedJobs } from './discover-queued-jobs.js';
import { recoverStaleClaims } from './recover-stale-claims.js';
import { redeliverMissedWebhooks } from './redeliver-missed-webhooks.js';
import { scanRegistrations } from './scan-registrations.js';
import { STALE_CLAIM_MS, type EngineDeps } from './engine-deps.js';
import type { Subject } from './subjects.js';

/** Scale-set registry keys for an EphemeralRunnerSet's name (its runners' name prefix). */

/** Stop a sweep with this much of the invocation left, and resume in the next one. */
export const SWEEP_RESERVE_MS = 15_000;
const OUTBOX_PER_SWEEP = 100;

export type DecideSlice = (subjects: Subject[], slice: Slice) => Promise<void>;

/**
 * The level-triggered sweep: recovers lost results, publishes the audit outbox, refreshes
 * registrations, then walks each cluster namespace by namespace with paged lists, deciding each
 * namespace as one slice. Its place is kept in the store: when the invocation's time runs short
 * it stops cleanly, and the next sweep resumes where it stopped.
 */
export async function runSweep(
  deps: EngineDeps,
  policy: Policy,
  now: number,
  decideSlice: DecideSlice,
): Promise<{ complete: boolean; namespaces: number }> {
  void policy;
  for (const r of await recoverStaleClaims(deps, now, deps.staleClaimMs ?? STALE_CLAIM_MS))
    deps.log.warn('claim without result re-checked', { ...r });
  await publishOutbox(deps);
  if (deps.deliveries) {
    // Deliveries the webhook claimed but did not publish (it died between the two).
    try {
      const r = await republishUnpublishedDeliveries(deps.deliveries, deps.bus, now);
      if (r.published.length > 0 || r.failed.length > 0)
        deps.log.warn('published deliveries the webhook claimed but never published', {
          published: r.published,
          failed: r.failed.map((f) => f.deliveryId),
        });
    } catch (error) {
      deps.log.warn('could not republish pending deliveries', {
        error: (error as Error).message,
      });
    }
    try {
      const redelivered = await redeliverMissedWebhooks(
        deps.github,
        deps.deliveries,
        deps.store,
        now,
      );
      if (redelivered.length > 0)
        deps.log.warn('asked GitHub to redeliver missed webhooks', { redelivered });
    } catch (error) {
      deps.log.warn('could not check webhook deliveries', { error: (error as Error).message });
    }
  }
  // GitHub reads, most urgent first, as far as each installation's observe budget goes.
  // The owners with jobs, read once for the pass.
  const owners = await deps.store.knownOwners(now);
  const stored = await checkQueuedOnGithub(await queuedJobs(owners, deps, now), deps, now);
  const queued = waitingAWhile(
    [...stored, ...(await discoverQueuedJobs(stored, owners, deps, now))],
    now,
  );
  const registrations = await scanRegistrations(owners, deps, now);
  const finished = finishedJobsReader(deps, now);

  // Every cluster's watches at once: each lasts until its bookmark, about a second.
  const followed = await Promise.all(
    deps.clusters.clusters().map(async (cluster) => {
      try {
        const gateway = await deps.clusters.forCluster(cluster);
        return await followCluster(cluster, gateway, deps, now);
      } catch (error) {
        return error as Error;
      }
    }),
  );
  let complete = true;
  let namespaces = 0;
  for (const [i, cluster] of deps.clusters.clusters().entries()) {
    try {
      const f = followed[i];
      if (f instanceof Error || f === undefined) throw f ?? new Error('not followed');
      const r = await sweepCluster(cluster, f, deps, now, {
        registrations,
        queued,
        finished,
        decideSlice,
      });
      namespaces += r.namespaces;
      if (!r.complete) {
        complete = false;
        break;
      }
    } catch (error) {
      deps.log.warn('cluster unavailable', { cluster, error: (error as Error).message });
      deps.metrics.count('ClusterUnavailable', { cluster });
    }
  }
  return { complete, namespaces };
}

/** Publishes audit events that were stored with their result but never reached the bus. */
export async function publishOutbox(
  deps: Pick<EngineDeps, 'store' | 'bus' | 'log' | 'policy'>,
): Promise<number> {
  const pending = await deps.store.unpublishedAudits(OUTBOX_PER_SWEEP);
  for (const p of pending) {
    await deps.bus.publish([
      {
        source: 'runner-medic',
        detailType: p.event.detailType,
        time: new Date(String(p.event.detail.at ?? Date.now())),
        detail: p.event.detail,
      },
    ]);
    await explainAction(p.event, deps);
    await deps.store.markPublished(p.key);
  }
  if (pending.length > 0)
    deps.log.warn('published audit events left in the outbox', { count: pending.length });
  return pending.length;
}

/**
 * How often every followed scope, and the nodes, are listed in full even when the watches resume:
 * the slow cadence that bounds what a wrong or lost cursor could hide, and re-decides every
 * namespace. A 410 Gone relists at once; this is the safety net beside it, and at 50,000 runners
 * one full list reads about 105,000 objects, so it runs every 6 hours (17,500 objects an hour).
 */
export const FULL_RELIST_MS = 6 * 3_600_000;
/** A container that starts from a stored cursor lists this many unknown scopes a sweep. */
const FILL_PER_SWEEP = 20;
const WHOLE_CLUSTER = '*';

/** One followed scope (a runner namespace, or `*`): its runners, and whether they are whole. */
interface ScopeMemory {
  runners: FollowedRunners;
  /** Listed since this container started: `runners` is the scope's every runner. */
  known: boolean;
}

/** What this container follows of one cluster. */
interface ClusterMemory {
  scopes: Map<string, ScopeMemory>;
  /**
   * The cluster's nodes by name: listed when this container first sweeps and at the slow relist;
   * in between, a node is read again when a runner pod on it changed. Not watched: every kubelet
   * reports its node's status every 5 min when nothing changed, 60,000 node events an hour at
   * 5,000 nodes, and a node going wrong changes its runner pods (the node lifecycle controller
   * marks them not ready, the taint manager and PodGC delete them, a drain evicts them).
   */
  nodes: Map<string, Node> | null;
  /** The node each followed runner pod was last seen on, so a deleted pod still names its node. */
  nodeOfPod: Map<string, string>;
  /** When every scope was last listed in full; null: never (the next sweep does). */
  listedAt: number | null;
  /** Namespaces that changed and are not decided yet. */
  pending: Set<string>;
  /** The cluster's stored node signals as last read: a new one decides its node's runners. */
  signalsSeen: Set<string>;
  /** Runners still up after their job, by namespace: their namespace reads their jobs. */
  outliving: Map<string, Set<string>>;
}

/** Followed runners per store (one deployment) and cluster, kept while the container lives. */
const memories = new WeakMap<FactsStore, Map<string, ClusterMemory>>();

const emptyRunners = (): FollowedRunners => ({
  ephemeralRunners: { objects: new Map(), resourceVersion: null },
  pods: { objects: new Map(), resourceVersion: null },
});

/** This container's memory of a cluster; a new container resumes from the stored cursor. */
async function clusterMemory(cluster: string, deps: EngineDeps, now: number) {
  let byCluster = memories.get(deps.store);
  if (!byCluster) memories.set(deps.store, (byCluster = new Map()));
  const held = byCluster.get(cluster);
  if (held) return held;
  const memory: ClusterMemory = {
    scopes: new Map(),
    nodes: null,
    nodeOfPod: new Map(),
    listedAt: null,
    pending: new Set(),
    signalsSeen: new Set(),
    outliving: new Map(),
  };
  const stored = await deps.watchCursors?.read(cluster, now);
  if (stored) {
    memory.listedAt = stored.listedAt;
    memory.pending = new Set(stored.pending);
    for (const [scope, rvs] of Object.entries(stored.scopes)) {
      const runners = emptyRunners();
      runners.ephemeralRunners.resourceVersion = rvs['ephemeralrunners'] ?? null;
      runners.pods.resourceVersion = rvs['pods'] ?? null;
      // Both cursors or neither: a half-known scope is listed.
      if (
        runners.ephemeralRunners.resourceVersion === null ||
        runners.pods.resourceVersion === null
      )
        continue;
      memory.scopes.set(scope, { runners, known: false });
    }
  }
  byCluster.set(cluster, memory);
  return memory;
}

const namespaceOfKey = (key: string) => key.slice(0, key.indexOf('/'));

/** The namespaces a scope's runners sit in. */
function namespacesIn(scope: string, runners: FollowedRunners): string[] {
  if (scope !== WHOLE_CLUSTER) return [scope];
  const keys = [...runners.ephemeralRunners.objects.keys(), ...runners.pods.objects.keys()];
  return [...new Set(keys.map(namespaceOfKey))];
}

/**
 * Brings this container's view of a cluster's runners up to date: each scope's watch resumes
 * from its resourceVersion for a few seconds (all scopes at once), or the scope is listed in
 * full (no cursor, 410 Gone, a cut that does not resume, the slow cadence, or a scope this
 * container has not listed yet and must decide). Changed namespaces become pending.
 */
async function followCluster(
  cluster: string,
  gateway: ClusterGateway,
  deps: EngineDeps,
  now: number,
): Promise<ClusterMemory> {
  const memory = await clusterMemory(cluster, deps, now);
  const scopes = deps.clusters.namespaces(cluster) ?? [WHOLE_CLUSTER];
  for (const key of memory.scopes.keys()) if (!scopes.includes(key)) memory.scopes.delete(key);
  const full = memory.listedAt === null || now - memory.listedAt >= FULL_RELIST_MS;
  let fill = FILL_PER_SWEEP;
  const pendingIn = (key: string) =>
    key === WHOLE_CLUSTER ? memory.pending.size > 0 : memory.pending.has(key);
  if (full) memory.nodes = null;
  const listNodes = memory.nodes === null;
  const nodesOfChangedPods = new Set<string>();
  const [listed] = await Promise.all([
    listNodes ? gateway.listNodes() : null,
    ...scopes.map(async (key) => {
      let scope = memory.scopes.get(key);
      if (!scope) memory.scopes.set(key, (scope = { runners: emptyRunners(), known: false }));
      const relist = () => {
        (scope as ScopeMemory).runners = emptyRunners();
      };
      if (full) relist();
      const namespace = key === WHOLE_CLUSTER ? null : key;
      let changes = await gateway.followRunners(namespace, scope.runners);
      // A scope this container never listed is listed whole before it can be decided (it
      // changed, or waits undecided), or to fill this container's view a few scopes a sweep.
      if (
        !changes.listed &&
        !scope.known &&
        (changes.changed.size > 0 || pendingIn(key) || fill-- > 0)
      ) {
        relist();
        changes = await gateway.followRunners(namespace, scope.runners);
      }
      if (changes.listed) {
        scope.known = true;
        for (const ns of namespacesIn(key, scope.runners)) memory.pending.add(ns);
        for (const [podKey, pod] of scope.runners.pods.objects)
          if (pod.nodeName !== null) memory.nodeOfPod.set(podKey, pod.nodeName);
      }
      for (const k of changes.changed) {
        memory.pending.add(namespaceOfKey(k));
        const node = nodeOfChangedPod(memory, k, scope.runners.pods.objects.get(k));
        if (node !== null) nodesOfChangedPods.add(node);
      }
    }),
  ]);
  if (listed) memory.nodes = new Map(listed.map((n) => [n.name, n]));
  else if (memory.nodes) await readNodesAgain(memory, memory.nodes, gateway, nodesOfChangedPods);
  if (full) memory.listedAt = now;
  return memory;
}

/** What of a node a rule reads: whether it is there, ready, cordoned, tainted, going away. */
const nodeState = (n: Node | undefined): string =>
  n === undefined
    ? 'gone'
    : JSON.stringify([
        n.uid,
        n.conditions.map((c) => [c.type, c.status, c.reason]),
        n.taints.map((t) => [t.key, t.value, t.effect]),
        n.unschedulable,
        n.deletionTimestamp,
      ]);

/**
 * The node a changed runner's pod is on, or was on when it was deleted: kept in
 * `nodeOfPod`, so that a deleted pod still names its node. Null when it has none.
 */
function nodeOfChangedPod(memory: ClusterMemory, key: string, pod: Pod | undefined): string | null {
  const node = pod?.nodeName ?? memory.nodeOfPod.get(key) ?? null;
  if (pod?.nodeName) memory.nodeOfPod.set(key, pod.nodeName);
  else if (!pod) memory.nodeOfPod.delete(key);
  return node;
}

/**
 * Reads again, by name, the nodes whose runner pods changed since the last sweep. The namespaces
 * of runner pods on a node whose state changed are decided (a node gone NotReady or deleted
 * changes its other pods later, or not at all); a node's status report alone changes nothing a
 * rule reads, and decides nothing.
 */
async function readNodesAgain(
  memory: ClusterMemory,
  nodes: Map<string, Node>,
  gateway: ClusterGateway,
  names: ReadonlySet<string>,
): Promise<void> {
  const read = await Promise.all(
    [...names].map(async (name) => [name, await gateway.getNode(name)] as const),
  );
  const changed = new Set<string>();
  for (const [name, node] of read) {
    if (nodeState(nodes.get(name)) !== nodeState(node ?? undefined)) changed.add(name);
    if (node) nodes.set(name, node);
    else nodes.delete(name);
  }
  if (changed.size === 0) return;
  for (const pod of knownListing(memory).pods)
    if (pod.nodeName !== null && changed.has(pod.nodeName))
      memory.pending.add(pod.metadata.namespace);
}

/** The runners of one namespace as followed (its scope must be known). */
function listingOf(memory: ClusterMemory, namespace: string): RunnerListing | null {
  const scope = memory.scopes.get(namespace) ?? memory.scopes.get(WHOLE_CLUSTER);
  if (!scope?.known) return null;
  const here = <T extends { metadata: { namespace: string } }>(m: Map<string, T>) =>
    [...m.values()].filter((o) => o.metadata.namespace === namespace);
  return {
    ephemeralRunners: here(scope.runners.ephemeralRunners.objects),
    pods: here(scope.runners.pods.objects),
  };
}

/** Every runner this container knows of the cluster, for the registries kept from them. */
function knownListing(memory: ClusterMemory): RunnerListing & { complete: boolean } {
  const out = { ephemeralRunners: [] as EphemeralRunner[], pods: [] as Pod[], complete: true };
  for (const scope of memory.scopes.values()) {
    if (!scope.known) {
      out.complete = false;
      continue;
    }
    out.ephemeralRunners.push(...scope.runners.ephemeralRunners.objects.values());
    out.pods.push(...scope.runners.pods.objects.values());
  }
  return out;
}

/**
 * How long a job is queued before the sweep decides it with its scale set's namespaces (rule 2),
 * every sweep while it waits. A job picked up within a sweep, as nearly every one is, is decided
 * by its own webhooks, whose timers wake the job alone: in a namespace's slice it made rule 2
 * set a starvation timer that listed the namespace live, and with one scale set across many
 * namespaces any job queued at a sweep made the sweep decide them all.
 */
const QUEUED_WAITING_MS = 60_000;

/** The queued jobs that have waited QUEUED_WAITING_MS or more (or whose creation is unknown). */
function waitingAWhile(queued: Facts['jobs'], now: number): Facts['jobs'] {
  return queued.filter((j) => {
    const since = ms(j.job.createdAt);
    return since === null || now - since >= QUEUED_WAITING_MS;
  });
}

/** The namespaces whose scale sets a queued job waits for: decided while it waits (rule 2). */
function namespacesOfQueued(memory: ClusterMemory, waiting: Facts['jobs']): Set<string> {
  const labels = new Set(waiting.flatMap((j) => j.job.labels.map((l) => l.toLowerCase())));
  const out = new Set<string>();
  if (labels.size === 0) return out;
  const { ephemeralRunners } = knownListing(memory);
  for (const er of ephemeralRunners) {
    const set = scaleSetOf(er.metadata)?.toLowerCase();
    if (set && labels.has(set)) out.add(er.metadata.namespace);
  }
  return out;
}

/** The namespaces of the runner sets offline registrations are named after. */
function namespacesOfRegistrations(
  memory: ClusterMemory,
  registrations: readonly RunnerRegistration[],
): Set<string> {
  const prefixes = new Set(
    registrations.map((r) => runnerSetPrefix(r.name)).filter((p): p is string => p !== null),
  );
  const out = new Set<string>();
  if (prefixes.size === 0) return out;
  const { ephemeralRunners, pods } = knownListing(memory);
  for (const o of [...ephemeralRunners, ...pods]) {
    const prefix = runnerSetPrefix(o.metadata.name);
    if (prefix !== null && prefixes.has(prefix)) out.add(o.metadata.namespace);
  }
  return out;
}

/**
 * The namespaces of the runner pods on nodes with a signal this container has not seen yet (by
 * node name, or by the instance the node runs on).
 */
function namespacesOnSignalledNodes(
  memory: ClusterMemory,
  pods: readonly Pod[],
  signals: readonly NodeSignal[],
): Set<string> {
  const nodes = new Set<string>();
  const seen = memory.signalsSeen;
  memory.signalsSeen = new Set();
  for (const s of signals) {
    const key = [s.kind, s.nodeName, s.instanceId, s.at].join('/');
    memory.signalsSeen.add(key);
    if (seen.has(key)) continue;
    if (s.nodeName !== null) nodes.add(s.nodeName);
    for (const n of memory.nodes?.values() ?? [])
      if (s.instanceId !== null && n.instanceId === s.instanceId) nodes.add(n.name);
  }
  const out = new Set<string>();
  if (nodes.size === 0) return out;
  for (const pod of pods)
    if (pod.nodeName !== null && nodes.has(pod.nodeName)) out.add(pod.metadata.namespace);
  return out;
}

/**
 * How far back a sweep looks for runners that outlived their jobs: since its last pass, or this
 * long when that was longer ago (or never, in this deployment).
 */
const LOOK_BACK_MS = 10 * 60_000;
const MINUTE_MS = 60_000;

/** Jobs recorded finished on a runner since a moment, read once a sweep for every cluster. */
type FinishedJobs = (since: number) => Promise<Facts['jobs']>;

function finishedJobsReader(deps: EngineDeps, now: number): FinishedJobs {
  const reads = new Map<number, Promise<StoreRead>>();
  return async (since) => {
    const minute = Math.floor(since / MINUTE_MS) * MINUTE_MS;
    let read = reads.get(minute);
    // Up to the minute of the last job already due: later ones are read by a later pass.
    const due = now - STUCK_AFTER_JOB_MS;
    if (!read) reads.set(minute, (read = deps.store.readFinishedJobs(minute, due, now)));
    return (await read).facts.jobs;
  };
}

/**
 * The runners that ran one of these jobs and whose pod still runs STUCK_AFTER_JOB_MS after the
 * job ended. A runner exits within seconds of its job, and ARC then removes it; one still up is
 * stuck (actions-runner-controller#4603) and changes nothing the watch would see, so its finished
 * job is what makes the sweep decide it, its jobs read by its name whatever its EphemeralRunner
 * says. Healthy runners cost a store read, no write.
 */
function outlivingRunners(pods: readonly Pod[], finished: Facts['jobs'], now: number): Pod[] {
  const due = new Set<string>();
  for (const { job } of finished) {
    const ended = ms(job.completedAt);
    if (job.runnerName !== null && ended !== null && ended + STUCK_AFTER_JOB_MS <= now)
      due.add(job.runnerName);
  }
  if (due.size === 0) return [];
  return pods.filter(
    (pod) => due.has(pod.metadata.name) && pod.phase !== 'Succeeded' && pod.phase !== 'Failed',
  );
}

/** Writes where the next container resumes: each scope's resourceVersions, pending namespaces. */
async function saveCursor(cluster: string, memory: ClusterMemory, deps: EngineDeps, now: number) {
  const cursors = deps.watchCursors;
  if (!cursors || memory.listedAt === null) return;
  const scopes: WatchCursor['scopes'] = {};
  for (const [key, scope] of memory.scopes) {
    const er = scope.runners.ephemeralRunners.resourceVersion;
    const pods = scope.runners.pods.resourceVersion;
    if (er !== null && pods !== null) scopes[key] = { ephemeralrunners: er, pods };
  }
  await cursors.write(
    cluster,
    { scopes, listedAt: memory.listedAt, pending: [...memory.pending].sort() },
    now,
  );
}

/** What a sweep found once, for every cluster, and how it decides a namespace. */
interface SweepFindings {
  registrations: RunnerRegistration[];
  queued: Facts['jobs'];
  finished: FinishedJobs;
  decideSlice: DecideSlice;
}

async function sweepCluster(
  cluster: string,
  memory: ClusterMemory,
  deps: EngineDeps,
  now: number,
  { registrations, queued, finished, decideSlice }: SweepFindings,
): Promise<{ complete: boolean; namespaces: number }> {
  const cursor = await deps.store.sweepCursor(cluster);
  const nodes = [...(memory.nodes?.values() ?? [])];
  await recordInstances(cluster, nodes, cursor?.lastPassStartedAt ?? null, deps, now);
  const nodeSignals = clusterNodeSignals(cluster, deps, now);
  const passStartedAt = cursor?.passStartedAt ?? now;
  const lastPassStartedAt = cursor?.lastPassStartedAt ?? null;

  // What every known runner teaches the registry of scale sets' homes.
  const known = knownListing(memory);
  // A node signal this container has not seen decides the namespaces of the runner pods on the
  // node: only a runner that took a job is recorded on its node, so idle runners on a node about
  // to go are replaced from here (rule 6), a sweep after the signal.
  const signals = await nodeSignals();
  for (const ns of namespacesOnSignalledNodes(memory, known.pods, signals.nodeSignals))
    memory.pending.add(ns);
  if (known.complete) {
    const sets: Record<string, string[]> = {};
    for (const ns of new Set(known.ephemeralRunners.map((e) => e.metadata.namespace)))
      noteScaleSets(sets, `${cluster}/${ns}`, listingOf(memory, ns) as RunnerListing);
    await deps.store.recordScaleSets(cluster, sets, now);
  }

  // A runner still up STUCK_AFTER_JOB_MS after its job ended is stuck (rule 1): its namespace
  // waits with the changed ones, so a sweep that pauses still decides it.
  // The look back is bounded: after a long gap (a cluster unreachable for hours) the slow full
  // relist decides every namespace anyway.
  const lastPass = Math.max(lastPassStartedAt ?? 0, now - LOOK_BACK_MS);
  const since = lastPass - STUCK_AFTER_JOB_MS - MINUTE_MS;
  for (const { metadata } of outlivingRunners(known.pods, await finished(since), now)) {
    memory.pending.add(metadata.namespace);
    const names = memory.outliving.get(metadata.namespace) ?? new Set<string>();
    memory.outliving.set(metadata.namespace, names.add(metadata.name));
  }

  // Decided: what changed (pending), where a queued job's scale set lives, and where the runner
  // sets of registrations read offline this sweep live (rule 5 needs no Kubernetes change).
  const names = [
    ...new Set([
      ...memory.pending,
      ...namespacesOfQueued(memory, queued),
      ...namespacesOfRegistrations(memory, registrations),
    ]),
  ].sort();
  let done = 0;
  for (const namespace of names) {
    const listing = listingOf(memory, namespace);
    if (!listing) continue;
    if (deps.remainingTimeMs && deps.remainingTimeMs() < SWEEP_RESERVE_MS) {
      await deps.store.setSweepCursor(
        cluster,
        { namespaceIndex: 0, passStartedAt, lastPassStartedAt },
        now,
      );
      await saveCursor(cluster, memory, deps, now);
      deps.log.info('sweep paused; the next one resumes here', { cluster, namespace });
      return { complete: false, namespaces: done };
    }
    const slice = await namespaceSlice(
      cluster,
      namespace,
      listing,
      nodes,
      registrations,
      queued,
      deps,
      now,
      nodeSignals,
      memory.outliving.get(namespace),
    );
    await decideSlice([{ kind: 'namespace', cluster, namespace }], slice);
    memory.pending.delete(namespace);
    memory.outliving.delete(namespace);
    done++;
  }
  await saveCursor(cluster, memory, deps, now);
  await deps.store.setSweepCursor(
    cluster,
    { namespaceIndex: 0, passStartedAt: null, lastPassStartedAt: passStartedAt },
    now,
  );
  return { complete: true, namespaces: done };
}

/** Where scale sets' runners live (`here` = cluster/namespace), for the scale-set registry. */
function noteScaleSets(sets: Record<string, string[]>, here: string, listing: RunnerListing) {
  for (const o of [...listing.ephemeralRunners, ...listing.pods]) {
    const set = scaleSetOf(o.metadata)?.toLowerCase();
    if (set) {
      const homes = (sets[set] ??= []);
      if (homes[homes.length - 1] !== here && !homes.includes(here)) homes.push(here);
    }
    // The EphemeralRunnerSet's name prefixes its runners' names: one location, exactly.
    const prefix = runnerSetPrefix(o.metadata.name);
    if (prefix) sets[`${RUNNER_SET_KEY}${prefix}`] = [here];
  }
}

/** The nodes each store was told of by this container (uid), so a warm sweep writes only new ones. */
const recordedNodes = new WeakMap<FactsStore, Set<string>>();

/**
 * Records which cluster and node each EC2 instance is (a spot warning names only the instance):
 * a node new to this container, and each node again once a day (spread over the day by its uid),
 * to outlive its TTL. A cold container writes each node once.
 */
async function recordInstances(
  cluster: string,
  nodes: readonly Node[],
  lastPassStartedAt: number | null,
  deps: EngineDeps,
  now: number,
): Promise<void> {
  let recorded = recordedNodes.get(deps.store);
  if (!recorded) recordedNodes.set(deps.store, (recorded = new Set()));
  const sinceLastPass = lastPassStartedAt === null ? null : now - lastPassStartedAt;
  for (const n of nodes) {
    if (!n.instanceId) continue;
    const phase = [...n.uid].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % DAY_MS, 0);
    const renew = sinceLastPass === null || (now + phase) % DAY_MS < sinceLastPass;
    if (recorded.has(n.uid) && !renew) continue;
    await deps.store.recordInstance(n.instanceId, cluster, n.name, now);
    recorded.add(n.uid);
  }
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * One namespace decided as a whole, outside a sweep: a timer the sweep set for it (a grace
 * period, a queued job's starvation threshold, an offline registration's grace).
 */
export async function decideNamespace(
  cluster: string,
  namespace: string,
  deps: EngineDeps,
  now: number,
  decideSlice: DecideSlice,
): Promise<void> {
  const subject: Subject = { kind: 'namespace', cluster, namespace };
  let slice: Slice;
  try {
    const gateway = await deps.clusters.forCluster(cluster);
    const listing = await listNamespace(gateway, namespace, deps.sweepPageSize ?? 500);
    const nodes: Node[] = [];
    for (const name of new Set(listing.pods.map((p) => p.nodeName)))
      if (name) {
        const node = await gateway.getNode(name);
        if (node) nodes.push(node);
      }
    const owners = await deps.store.knownOwners(now);
    const registrations: RunnerRegistration[] = [];
    for (const { owner } of owners)
      registrations.push(...(await deps.store.readRegistrations(owner, now)).facts.registrations);
    slice = await namespaceSlice(
      cluster,
      namespace,
      listing,
      nodes,
      registrations,
      waitingAWhile(await queuedJobs(owners, deps, now), now),
      deps,
      now,
      clusterNodeSignals(cluster, deps, now),
    );
  } catch (error) {
    slice = {
      facts: emptyFacts(),
      unavailable: [{ cluster, error: error as Error }],
      itemsRead: 0,
    };
  }
  await decideSlice([subject], slice);
}

async function listNamespace(
  gateway: ClusterGateway,
  namespace: string,
  pageSize: number,
): Promise<RunnerListing> {
  const out: RunnerListing = { ephemeralRunners: [], pods: [] };
  let next: string | null = null;
  do {
    const page = await gateway.listRunnersPage(namespace, next, pageSize);
    out.ephemeralRunners.push(...page.ephemeralRunners);
    out.pods.push(...page.pods);
    next = page.next;
  } while (next !== null);
  return out;
}

/**
 * The runners whose jobs the store is asked for: those that took a job or look lost, and those
 * the store already knows (an idle, healthy runner has no job to join).
 */
function runnersWorthJoining(listing: RunnerListing, stored: ReadonlySet<string>): Set<string> {
  const worth = new Set<string>();
  for (const er of listing.ephemeralRunners)
    if (
      er.job.workflowRunId !== null ||
      er.job.jobId !== null ||
      er.phase === 'Failed' ||
      er.metadata.deletionTimestamp !== null ||
      stored.has(er.metadata.name)
    )
      worth.add(er.metadata.name);
  const erNames = new Set(listing.ephemeralRunners.map((e) => e.metadata.name));
  for (const p of listing.pods)
    if (p.phase === 'Failed' || p.phase === 'Succeeded' || p.metadata.deletionTimestamp !== null)
      worth.add(p.metadata.name);
  for (const p of listing.pods) if (!erNames.has(p.metadata.name)) worth.add(p.metadata.name);
  for (const name of stored) worth.add(name);
  return worth;
}

/** Registrations named like this namespace's runner sets; queued jobs for its scale sets. */
function addRegistrationsAndQueuedJobs(
  facts: Facts,
  names: ReadonlySet<string>,
  listing: RunnerListing,
  registrations: RunnerRegistration[],
  queued: Facts['jobs'],
): void {
  const prefixes = new Set(
    [...names].map((n) => runnerSetPrefix(n)).filter((p): p is string => p !== null),
  );
  facts.registrations = registrations.filter((r) => {
    const p = runnerSetPrefix(r.name);
    return p !== null && prefixes.has(p);
  });
  const sets = new Set(
    [
      ...listing.ephemeralRunners.map((e) => scaleSetOf(e.metadata)),
      ...listing.pods.map((p) => scaleSetOf(p.metadata)),
    ]
      .filter((s): s is string => s !== null)
      .map((s) => s.toLowerCase()),
  );
  const known = new Set(facts.jobs.map((j) => `${j.repository.fullName}#${j.job.jobId}`));
  for (const j of queued)
    if (
      j.job.labels.some((l) => sets.has(l.toLowerCase())) &&
      !known.has(`${j.repository.fullName}#${j.job.jobId}`)
    )
      facts.jobs.push(j);
}

/** A cluster's node signals, as many namespaces ask for them. */
type ClusterNodeSignals = () => Promise<{ nodeSignals: NodeSignal[]; itemsRead: number }>;

/**
 * A cluster's node signals read once (one query, however many nodes), for every namespace decided
 * with them; the items read count with the first.
 */
function clusterNodeSignals(cluster: string, deps: EngineDeps, now: number): ClusterNodeSignals {
  let read: Promise<StoreRead> | undefined;
  return async () => {
    const first = read === undefined;
    read ??= deps.store.readClusterNodeSignals(cluster, now);
    const { facts, itemsRead } = await read;
    return { nodeSignals: facts.nodeSignals, itemsRead: first ? itemsRead : 0 };
  };
}

/** One namespace as a slice: its runners as listed, and what the store knows of them. */
async function namespaceSlice(
  cluster: string,
  namespace: string,
  listing: RunnerListing,
  nodes: Node[],
  registrations: RunnerRegistration[],
  queued: Facts['jobs'],
  deps: EngineDeps,
  now: number,
  nodeSignals: ClusterNodeSignals,
  /** Runners still up after their job: their jobs are read by name whatever their objects say. */
  outliving: ReadonlySet<string> = new Set(),
): Promise<Slice> {
  const facts: Facts = emptyFacts();
  let itemsRead = 0;
  const names = new Set([
    ...listing.ephemeralRunners.map((e) => e.metadata.name),
    ...listing.pods.map((p) => p.metadata.name),
  ]);
  const runs = new Map<string, { repo: string; runId: number }>();
  // What the store holds about this namespace's runners, in one query; then the jobs of the
  // runners that took one or look lost (an idle, healthy runner has no job to join).
  const own = await deps.store.readNamespace(cluster, namespace, now);
  itemsRead += own.itemsRead;
  addFacts(facts, own.facts);
  const worthJoining = runnersWorthJoining(listing, new Set(own.runners.map((r) => r.name)));
  for (const name of outliving) worthJoining.add(name);
  for (const name of worthJoining) {
    const read = await deps.store.readRunnerName(name, now);
    itemsRead += read.itemsRead;
    addFacts(facts, read.facts);
    followRunsOf(read.facts.jobs, name, runs);
  }
  // Stored runners of this namespace no longer listed (their objects are gone).
  const refs: RunnerRef[] = [...names].map((name) => ({ cluster, namespace, name }));
  for (const r of [...facts.losses, ...facts.erJobCache, ...facts.missingPods])
    if (r.cluster === cluster && r.namespace === namespace) {
      const name = 'runnerName' in r ? r.runnerName : r.name;
      if (!names.has(name)) refs.push({ cluster, namespace, name });
    }
  for (const r of runs.values()) {
    const read = await deps.store.readRun(r.repo, r.runId, now);
    itemsRead += read.itemsRead;
    addFacts(facts, read.facts);
  }
  facts.pods = listing.pods;
  facts.ephemeralRunners = listing.ephemeralRunners;
  const used = new Set(listing.pods.map((p) => p.nodeName));
  facts.nodes = nodes.filter((n) => used.has(n.name));
  const signals = await nodeSignals();
  itemsRead += signals.itemsRead;
  const present = new Set(facts.nodes.map((n) => n.name));
  facts.nodeSignals.push(
    ...signals.nodeSignals.filter((n) => n.nodeName !== null && present.has(n.nodeName)),
  );
  // Keep only what belongs to this namespace's runners (names may repeat across namespaces).
  const here = (c: string, ns: string) => c === cluster && ns === namespace;
  facts.losses = facts.losses.filter((l) => here(l.cluster, l.namespace));
  facts.erJobCache = facts.erJobCache.filter((e) => here(e.cluster, e.namespace));
  facts.missingPods = facts.missingPods.filter((m) => here(m.cluster, m.namespace));
  facts.runnerWarnings = facts.runnerWarnings.filter((w) => here(w.cluster, w.namespace));
  await noteRunnerObjects(
    facts,
    deps.store,
    cluster,
    refs,
    { pods: listing.pods, ers: listing.ephemeralRunners },
    now,
  );
  facts.listings = [{ cluster, namespace, at: now }];

  addRegistrationsAndQueuedJobs(facts, names, listing, registrations, queued);
  itemsRead += await readBreakers(facts, deps.store, now);
  return { facts, unavailable: [], itemsRead };
}

/** GitHub-side level check: at most this many queued jobs are re-read per sweep. */
const QUEUED_CHECKS_PER_SWEEP = 20;

/**
 * The sweep's own look at GitHub: the oldest stored queued jobs are re-read (bounded in calls),
 * so a job whose later webhooks were all lost is seen as it is, and a job still queued is
 * seen starving even when no webhook ever says so again.
 */
async function checkQueuedOnGithub(
  queued: Facts['jobs'],
  deps: EngineDeps,
  now: number,
): Promise<Facts['jobs']> {
  const oldest = [...queued]
    .sort((a, b) => (a.job.createdAt ?? '').localeCompare(b.job.createdAt ?? ''))
    .slice(0, QUEUED_CHECKS_PER_SWEEP);
  const out = new Map(queued.map((j) => [`${j.repository.fullName}#${j.job.jobId}`, j]));
  const failed = new Set<string>();
  for (const j of oldest) {
    if (failed.has(j.repository.owner)) continue;
    try {
      const ref = { repo: j.repository.fullName, installationId: j.installationId };
      const read = () => deps.github.getJob(ref, j.job.jobId);
      const fresh =
        j.installationId === null
          ? await read()
          : await deps.github.observe(j.installationId, read);
      if (!fresh || fresh.status === j.job.status) continue;
      const record = { ...j, job: fresh };
      await deps.store.recordJob(record, now);
      out.delete(`${j.repository.fullName}#${j.job.jobId}`);
    } catch (error) {
      failed.add(j.repository.owner);
      deps.log.warn('installation unavailable', {
        org: j.repository.owner,
        error: (error as Error).message,
      });
      deps.metrics.count('InstallationUnavailable', { org: j.repository.owner });
    }
  }
  return [...out.values()];
}

/** Queued jobs of every owner with jobs (the sparse queued index), for rule 2. */
async function queuedJobs(
  owners: readonly KnownOwner[],
  deps: EngineDeps,
  now: number,
): Promise<Facts['jobs']> {
  const out: Facts['jobs'] = [];
  for (const { owner } of owners)
    out.push(...(await deps.store.readQueuedJobs(owner, now)).facts.jobs);
  return out;
}
