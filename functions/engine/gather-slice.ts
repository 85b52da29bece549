import type { EphemeralRunner, Node, Pod } from '../domain/model/cluster-facts.js';
import {
  emptyFacts,
  type Facts,
  type JobRecord,
  type RunnerOnNode,
} from '../domain/model/facts.js';
import { erJobCacheEntry, erJobCacheOf, runnerOnNodeOf } from '../domain/correlate/job-records.js';
import { classifyKilledRunner } from '../domain/classify/classify-pod.js';
import { scaleSetOf } from '../domain/correlate/runner-guard.js';
import type { ClusterGateway, ClusterGateways } from '../ports/cluster-gateway.js';
import {
  RUNNER_SET_KEY,
  emptyStoredFacts,
  type FactsStore,
  type RunnerRef,
  type StoreRead,
  type StoredFacts,
} from '../ports/facts-store.js';
import type { Subject } from './subjects.js';
import { runnerSetPrefix } from '../domain/correlate/runner-of-job.js';
import { runAttemptKey } from '../domain/correlate/correlation.js';
import type { Need } from '../domain/model/action.js';
import { dedupeFacts } from './dedupe-facts.js';

/** One slice of the world: the facts of some subjects, read from the store and the clusters. */
export interface Slice {
  facts: Facts;
  /** Clusters that could not be read: their subjects were left out of this slice. */
  unavailable: { cluster: string; error: Error }[];
  /** Store items read for this slice. */
  itemsRead: number;
}

export interface SliceDeps {
  store: FactsStore;
  clusters: ClusterGateways;
}

/** Runs of these jobs matter to a runner's slice (rule 3 re-runs, rule 4 cancels). */
const FOLLOW_RUN = new Set(['failure', 'cancelled']);

/** Adds to `runs` the run of each job that ran on runner `name` and may need its run read. */
export function followRunsOf(
  jobs: readonly JobRecord[],
  name: string,
  runs: Map<string, { repo: string; runId: number }>,
): void {
  for (const j of jobs)
    if (
      j.job.runnerName === name &&
      (j.job.status === 'in_progress' || FOLLOW_RUN.has(j.job.conclusion ?? ''))
    )
      runs.set(`${j.repository.fullName}#${j.job.runId}`, {
        repo: j.repository.fullName,
        runId: j.job.runId,
      });
}
const refKey = (r: RunnerRef) => `${r.cluster}/${r.namespace}/${r.name}`;

/**
 * Loads the facts of the given subjects: their store partitions and the joins the rules need
 * (a job's run and runner, a runner's jobs, a node's runners), then only their objects from the
 * clusters (GET by name; a node by name). Nothing is listed across a cluster.
 */
export async function gatherSlice(
  subjects: Subject[],
  deps: SliceDeps,
  now: number,
): Promise<Slice> {
  const reader = new SliceReader(deps, now);
  for (const s of subjects) await reader.readSubject(s);
  // Runs first (their jobs name runners), then runner names (their jobs may name runs).
  await reader.readRuns();
  await reader.readNames(true);
  await reader.readRuns();
  await reader.readNames(false);
  await reader.locateByScaleSet();
  return reader.readClusters();
}

/**
 * What rule 4 asks for (`runners-of-run`): the runners of a run attempt's in-progress jobs, read
 * as a slice of their names (their records, then their objects where their scale sets live) and
 * added to `facts`, which then records the attempt as read.
 */
export async function readRunnersOfRun(
  need: Extract<Need, { kind: 'runners-of-run' }>,
  facts: Facts,
  deps: SliceDeps,
  now: number,
): Promise<Slice['unavailable']> {
  const names = new Set<string>();
  for (const { repository, job } of facts.jobs)
    if (
      repository.fullName === need.repo &&
      job.runId === need.runId &&
      job.runAttempt === need.runAttempt &&
      job.status === 'in_progress' &&
      job.runnerName !== null
    )
      names.add(job.runnerName);
  const slice = await gatherSlice(
    [...names].map((name) => ({ kind: 'runner-name', name })),
    deps,
    now,
  );
  // What the decision already holds comes last, so it wins (dedupeFacts keeps the last copy):
  // a job's annotations read in an earlier round are not replaced by its stored record.
  const both = { ...facts };
  for (const k of Object.keys(slice.facts) as (keyof Facts)[])
    (both[k] as unknown[]) = [...(slice.facts[k] as unknown[]), ...(facts[k] as unknown[])];
  rememberAsJobCache(
    both,
    (r) => names.has(r.name) && !slice.unavailable.some((u) => u.cluster === r.cluster),
  );
  Object.assign(facts, dedupeFacts(both), {
    runnersOfRunsRead: [
      ...facts.runnersOfRunsRead,
      runAttemptKey(need.repo, need.runId, need.runAttempt),
    ],
  });
  return slice.unavailable;
}

/**
 * Runners known from memory (their records on a node) that were now read live: decided from what
 * was read, their records stay only as their job caches (their EphemeralRunners may be gone). A
 * job cache already in the facts is kept.
 */
export function rememberAsJobCache(facts: Facts, read: (r: RunnerOnNode) => boolean): void {
  const cached = new Set(facts.erJobCache.map((e) => refKey({ ...e, name: e.runnerName })));
  for (const r of facts.runnersOnNodes.filter(read)) {
    const cache = erJobCacheOf(r);
    if (cache && !cached.has(refKey(r))) facts.erJobCache = [...facts.erJobCache, cache];
  }
  facts.runnersOnNodes = facts.runnersOnNodes.filter((r) => !read(r));
}

type NodeRef = { cluster: string; nodeName: string };
type Witness = { cluster: string; namespace: string; scaleSet: string };

/** The state of one slice being read: what was read so far, and what remains to read. */
class SliceReader {
  private readonly configured: Set<string>;
  private readonly stored = emptyStoredFacts();
  private itemsRead = 0;
  private readonly seenParts = new Set<string>();
  private readonly runners = new Map<string, RunnerRef>();
  private readonly nodes = new Map<string, NodeRef>();
  private readonly nodeSubjects: NodeRef[] = [];
  private readonly names = new Set<string>();
  private readonly runs = new Map<string, { repo: string; runId: number }>();
  /** The runners recorded running a job on each node read (cluster/node → runners). */
  private readonly onNodes = new Map<string, RunnerOnNode[]>();
  private readonly witnesses = new Map<string, Witness>();

  constructor(
    private readonly deps: SliceDeps,
    private readonly now: number,
  ) {
    this.configured = new Set(deps.clusters.clusters());
  }

  private take(read: StoreRead): void {
    this.itemsRead += read.itemsRead;
    addFacts(this.stored, read.facts);
    for (const r of read.runners)
      if (this.configured.has(r.cluster) && !this.onlyPlaced(r, read))
        this.runners.set(refKey(r), r);
  }

  /**
   * A runner on a node this slice read, that the read names only by its job cache (its record on
   * the node): it is decided from memory, and its objects are read only if a rule asks. A loss,
   * a warning or a missing pod of it is read live.
   */
  private onlyPlaced(r: RunnerRef, read: StoreRead): boolean {
    const key = refKey(r);
    if (!this.remembered().some((x) => refKey(x) === key)) return false;
    const { losses, runnerWarnings, missingPods } = read.facts;
    return (
      ![...losses, ...runnerWarnings].some((x) => refKey({ ...x, name: x.runnerName }) === key) &&
      !missingPods.some((m) => refKey(m) === key)
    );
  }

  /** Reads a part once: a store partition or index already read adds nothing. */
  private firstTime(part: string): boolean {
    if (this.seenParts.has(part)) return false;
    this.seenParts.add(part);
    return true;
  }

  async readSubject(s: Subject): Promise<void> {
    if ('cluster' in s && !this.configured.has(s.cluster)) return;
    switch (s.kind) {
      case 'runner':
        this.runners.set(refKey(s), s);
        this.names.add(s.name);
        return;
      case 'runner-name':
        this.names.add(s.name);
        return;
      case 'job': {
        const read = await this.deps.store.readJob(s.repo, s.jobId, this.now);
        this.take(read);
        for (const j of read.facts.jobs) if (j.job.runnerName) this.names.add(j.job.runnerName);
        return;
      }
      case 'run':
        this.runs.set(`${s.repo}#${s.runId}`, s);
        return;
      case 'node':
        return this.readNode(s);
      case 'instance': {
        const { node, read } = await this.deps.store.readInstance(s.instanceId, this.now);
        this.take(read);
        if (node && this.configured.has(node.cluster)) await this.readNode(node);
        return;
      }
      case 'namespace':
        return;
    }
  }

  /**
   * A node's partition holds its signals and the runners recorded running a job on it: a node
   * signal is decided from those, reading a runner's objects only when a rule asks.
   */
  private async readNode(n: NodeRef): Promise<void> {
    this.nodes.set(`${n.cluster}/${n.nodeName}`, n);
    this.nodeSubjects.push(n);
    if (!this.firstTime(`node:${n.cluster}/${n.nodeName}`)) return;
    const read = await this.deps.store.readNode(n.cluster, n.nodeName, this.now);
    this.take(read);
    const watched = this.deps.clusters.namespaces(n.cluster);
    const here = read.runnersOnNode.filter(
      (r) => watched === null || watched.includes(r.namespace),
    );
    this.onNodes.set(`${n.cluster}/${n.nodeName}`, here);
    for (const r of here) this.names.add(r.name);
  }

  async readRuns(): Promise<void> {
    for (const [k, r] of this.runs) {
      if (!this.firstTime(`run:${k}`)) continue;
      const read = await this.deps.store.readRun(r.repo, r.runId, this.now);
      this.take(read);
      // The runners of the run's failed and cancelled jobs (rule 3's evidence). Those of its jobs
      // in progress are read only when rule 4 asks (readRunnersOfRun): read here, a matrix of n
      // legs read n runners at each of its jobs' events.
      for (const j of read.facts.jobs)
        if (j.job.runnerName && j.job.status === 'completed' && j.job.conclusion !== 'success')
          this.names.add(j.job.runnerName);
    }
  }

  async readNames(followRuns: boolean): Promise<void> {
    for (const name of this.names) await this.readName(name, followRuns);
  }

  private async readName(name: string, followRuns: boolean): Promise<void> {
    if (!this.firstTime(`name:${name}`)) return;
    const read = await this.deps.store.readRunnerName(name, this.now);
    this.take(read);
    if (followRuns) followRunsOf(read.facts.jobs, name, this.runs);
  }

  private remembered(): RunnerOnNode[] {
    return [...this.onNodes.values()].flat();
  }

  /** A runner known only by name (a job's runner_name) is looked for where its scale set lives. */
  async locateByScaleSet(): Promise<void> {
    const located = new Set([...this.runners.values(), ...this.remembered()].map((r) => r.name));
    const unlocated = [...this.names].filter((n) => !located.has(n));
    if (unlocated.length === 0) return;
    const { sets, itemsRead } = await this.deps.store.readScaleSets(this.now);
    this.itemsRead += itemsRead;
    for (const name of unlocated) {
      const job = this.stored.jobs.find((j) => j.job.runnerName === name);
      const prefix = runnerSetPrefix(name);
      const exact = prefix ? sets[`${RUNNER_SET_KEY}${prefix}`] : undefined;
      for (const label of job?.job.labels ?? []) {
        const scaleSet = sets[label.toLowerCase()];
        if (!scaleSet) continue;
        // Where its EphemeralRunnerSet lives, when known; else every home of its scale set.
        for (const where of exact ?? scaleSet) {
          const [cluster, namespace] = where.split('/');
          if (!cluster || !namespace || !this.configured.has(cluster)) continue;
          this.runners.set(refKey({ cluster, namespace, name }), { cluster, namespace, name });
          this.witnesses.set(`${cluster}/${namespace}/${label}`, {
            cluster,
            namespace,
            scaleSet: label,
          });
        }
      }
    }
  }

  /** Reads each cluster's objects of the slice; a cluster that fails is left out, alone. */
  async readClusters(): Promise<Slice> {
    // A runner whose objects this slice reads (found or gone) is decided from them, not from
    // memory: it is not read a second time on a rule's demand.
    const remembered = this.remembered().filter((r) => !this.runners.has(refKey(r)));
    // A remembered runner's record is its job cache too (read again by its name): it is decided
    // as remembered, and becomes a cache only if a rule reads its objects (run-engine.ts).
    const isRemembered = new Set(remembered.map(refKey));
    const erJobCache = this.stored.erJobCache.filter(
      (e) => !isRemembered.has(refKey({ ...e, name: e.runnerName })),
    );
    const facts: Facts = {
      ...emptyFacts(),
      ...this.stored,
      erJobCache,
      runnersOnNodes: remembered,
    };
    const unavailable: Slice['unavailable'] = [];
    const byCluster = new Map<string, { runners: RunnerRef[]; nodes: string[] }>();
    const group = (cluster: string) => {
      let g = byCluster.get(cluster);
      if (!g) byCluster.set(cluster, (g = { runners: [], nodes: [] }));
      return g;
    };
    for (const r of this.runners.values()) group(r.cluster).runners.push(r);
    for (const n of this.nodes.values()) group(n.cluster).nodes.push(n.nodeName);
    for (const [cluster, g] of byCluster) {
      try {
        await this.readCluster(cluster, g, facts);
      } catch (error) {
        unavailable.push({ cluster, error: error as Error });
        dropCluster(facts, cluster);
      }
    }
    // A registration is judged only when its runner's objects were read in this slice.
    const looked = new Set(
      [...this.runners.values()]
        .filter((r) => !unavailable.some((u) => u.cluster === r.cluster))
        .map((r) => r.name),
    );
    facts.registrations = facts.registrations.filter((r) => looked.has(r.name));
    this.itemsRead += await readBreakers(facts, this.deps.store, this.now);
    return { facts, unavailable, itemsRead: this.itemsRead };
  }

  private async readCluster(
    cluster: string,
    g: { runners: RunnerRef[]; nodes: string[] },
    facts: Facts,
  ): Promise<void> {
    const gateway = await this.deps.clusters.forCluster(cluster);
    const listedPods = await this.listPodsOnUnknownNodes(cluster, gateway, g.runners);
    // The runs of jobs on the node's runners: their other jobs tell whether a sibling still
    // runs on a live runner (rule 4 cancels a run only when none does).
    await this.readRuns();
    const objects = await readRunners(gateway, g.runners, listedPods);
    facts.pods.push(...objects.pods);
    facts.ephemeralRunners.push(...objects.ers);
    await this.readWitnesses(cluster, gateway, g.runners, objects, facts);
    const nodeNames = new Set([
      ...g.nodes,
      ...objects.pods.map((p) => p.nodeName).filter((n): n is string => n !== null),
    ]);
    for (const nodeName of nodeNames) await this.readNodeObject(cluster, nodeName, gateway, facts);
    await noteRunnerObjects(facts, this.deps.store, cluster, g.runners, objects, this.now);
  }

  /**
   * A node the sweep has seen no runner on (a new node, or before the first sweep): its runner
   * pods are listed on it by field selector, when runner-medic may list across the cluster. A
   * namespaced deployment waits for the sweep to place them.
   */
  private async listPodsOnUnknownNodes(
    cluster: string,
    gateway: ClusterGateway,
    clusterRunners: RunnerRef[],
  ): Promise<Map<string, Pod>> {
    const listedPods = new Map<string, Pod>();
    for (const n of this.nodeSubjects.filter((x) => x.cluster === cluster)) {
      if ((this.onNodes.get(`${cluster}/${n.nodeName}`) ?? []).length > 0) continue;
      if (this.deps.clusters.namespaces(cluster) !== null) continue;
      for (const pod of await gateway.listRunnerPodsOnNode(n.nodeName)) {
        const ref = { cluster, namespace: pod.metadata.namespace, name: pod.metadata.name };
        listedPods.set(refKey(ref), pod);
        if (this.runners.has(refKey(ref))) continue;
        this.runners.set(refKey(ref), ref);
        clusterRunners.push(ref);
        await this.readName(ref.name, true);
      }
    }
    return listedPods;
  }

  /**
   * A runner whose objects are gone is still known as ARC's through another runner of its
   * scale set (one list, limit 1, in its namespace).
   */
  private async readWitnesses(
    cluster: string,
    gateway: ClusterGateway,
    clusterRunners: RunnerRef[],
    objects: { pods: Pod[]; ers: EphemeralRunner[] },
    facts: Facts,
  ): Promise<void> {
    const has = (xs: { metadata: { name: string; namespace: string } }[], r: RunnerRef) =>
      xs.some((x) => x.metadata.name === r.name && x.metadata.namespace === r.namespace);
    for (const w of this.witnesses.values()) {
      if (w.cluster !== cluster) continue;
      const missing = clusterRunners.some(
        (r) => r.namespace === w.namespace && !has(objects.ers, r) && !has(objects.pods, r),
      );
      if (!missing) continue;
      const kin = await gateway.findRunnerOfScaleSet(w.scaleSet, [w.namespace]);
      if (kin) facts.ephemeralRunners.push(kin);
    }
  }

  private async readNodeObject(
    cluster: string,
    nodeName: string,
    gateway: ClusterGateway,
    facts: Facts,
  ): Promise<void> {
    const node: Node | null = await gateway.getNode(nodeName);
    if (node) {
      facts.nodes.push(node);
      if (node.instanceId)
        await this.deps.store.recordInstance(node.instanceId, cluster, nodeName, this.now);
    }
    if (!this.firstTime(`node:${cluster}/${nodeName}`)) return;
    const read = await this.deps.store.readNode(cluster, nodeName, this.now);
    this.itemsRead += read.itemsRead;
    facts.nodeSignals.push(...read.facts.nodeSignals);
  }
}

/** GET each runner's pod (unless just listed) and EphemeralRunner by name. */
async function readRunners(
  gateway: ClusterGateway,
  refs: RunnerRef[],
  listedPods: ReadonlyMap<string, Pod> = new Map(),
): Promise<{ pods: Pod[]; ers: EphemeralRunner[]; listed: Set<string> }> {
  const pods: Pod[] = [];
  const ers: EphemeralRunner[] = [];
  for (const r of refs) {
    const listed = listedPods.get(refKey(r));
    const [pod, er] = await Promise.all([
      listed ?? gateway.getPod(r.namespace, r.name),
      gateway.getEphemeralRunner(r.namespace, r.name),
    ]);
    if (pod) pods.push(pod);
    if (er) ers.push(er);
  }
  return { pods, ers, listed: new Set(refs.map(refKey)) };
}

/** A stored job in progress names this runner (by GitHub runner id where both have one). */
function runsAJob(facts: Facts, er: EphemeralRunner): boolean {
  return facts.jobs.some(
    ({ job }) =>
      job.status === 'in_progress' &&
      job.runnerName === er.metadata.name &&
      (job.runnerId === null || er.runnerId === null || job.runnerId === er.runnerId),
  );
}

/**
 * What reading a runner's objects teaches the store: an EphemeralRunner's job fields (cached on
 * first sight, since ARC may delete the object quickly), a pod missing under a live
 * EphemeralRunner (remembered from first sight), and records that no longer apply.
 */
export async function noteRunnerObjects(
  facts: Facts,
  store: FactsStore,
  cluster: string,
  refs: RunnerRef[],
  objects: { pods: Pod[]; ers: EphemeralRunner[] },
  now: number,
): Promise<void> {
  const podNames = new Set(objects.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
  const erNames = new Set(objects.ers.map((e) => `${e.metadata.namespace}/${e.metadata.name}`));
  for (const er of objects.ers) {
    const { name, namespace } = er.metadata;
    const entry = erJobCacheEntry(er, now);
    const known = facts.erJobCache.some(
      (e) => e.cluster === cluster && e.namespace === namespace && e.runnerName === name,
    );
    const pod = objects.pods.find(
      (p) => p.metadata.namespace === namespace && p.metadata.name === name,
    );
    const onNode = pod ? runnerOnNodeOf(er, pod, now) : null;
    if (entry && !known) {
      // One write: a runner that took a job is recorded on its node, and that record is its job
      // cache; only one whose pod is not there (or not bound) is cached alone.
      if (onNode) await store.recordRunnerOnNode(onNode, now);
      else await store.cacheErJob(entry, now);
      facts.erJobCache.push(entry);
    } else if (!entry && onNode && runsAJob(facts, er)) {
      // Its job's webhook came before ARC wrote the job into the EphemeralRunner: placed now, so
      // that a warning on its node finds it; its job fields follow when they are seen.
      await store.recordRunnerOnNode(onNode, now);
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
      facts.missingPods.push(pod);
    }
  }
  for (const pod of objects.pods) await recordKill(facts, store, pod, now);
  const looked = new Set(refs.map((r) => `${r.namespace}/${r.name}`));
  for (const m of facts.missingPods.filter((m) => m.cluster === cluster)) {
    const k = `${m.namespace}/${m.name}`;
    if (!looked.has(k) || erNames.has(k)) continue;
    await store.clearMissingPod(cluster, m.namespace, m.name);
    facts.missingPods = facts.missingPods.filter((x) => x !== m);
  }
  // Looking a runner up by name is as good as a listing for it: absent means absent.
  for (const namespace of new Set(refs.map((r) => r.namespace)))
    if (!facts.listings.some((l) => l.cluster === cluster && l.namespace === namespace))
      facts.listings.push({ cluster, namespace, at: now });
}

/**
 * A busy runner's pod seen killed (classifyKilledRunner) is stored as its loss at once: ARC ≥ 0.15
 * deletes the pod and its EphemeralRunner within a second and no Event tells of the kill, so this
 * record is what the hard-kill fast path decides from once they are gone. It joins this slice's
 * decisions only from the next one: the live objects speak for themselves now.
 */
async function recordKill(facts: Facts, store: FactsStore, pod: Pod, now: number): Promise<void> {
  const loss = classifyKilledRunner(pod);
  if (!loss?.ownedByArc) return;
  const same = (x: { cluster: string; namespace: string }, name: string) =>
    x.cluster === loss.cluster && x.namespace === loss.namespace && name === loss.runnerName;
  if (!facts.erJobCache.some((e) => same(e, e.runnerName))) return;
  const known = facts.losses.some(
    (l) => same(l, l.runnerName) && l.cause.kind === loss.cause.kind && l.podUid === loss.podUid,
  );
  if (!known) await store.recordLoss(loss, now);
}

/** The breakers of the clusters and scale sets in the slice. */
export async function readBreakers(facts: Facts, store: FactsStore, now: number): Promise<number> {
  const scopes = new Map<string, { cluster: string; scaleSet: string | null }>();
  const add = (cluster: string, scaleSet: string | null) => {
    scopes.set(`${cluster}#*`, { cluster, scaleSet: null });
    if (scaleSet) scopes.set(`${cluster}#${scaleSet}`, { cluster, scaleSet });
  };
  for (const p of facts.pods) add(p.cluster, scaleSetOf(p.metadata));
  for (const er of facts.ephemeralRunners) add(er.cluster, scaleSetOf(er.metadata));
  for (const l of facts.losses) add(l.cluster, l.scaleSet);
  for (const e of facts.erJobCache) add(e.cluster, e.scaleSet);
  let read = 0;
  for (const s of scopes.values()) {
    const r = await store.readBreaker(s.cluster, s.scaleSet, now);
    read += r.itemsRead;
    facts.breakers.push(...r.facts.breakers);
  }
  return read;
}

/** Facts of a cluster that could not be read are left out: nothing there is decided. */
function dropCluster(facts: Facts, cluster: string): void {
  facts.pods = facts.pods.filter((p) => p.cluster !== cluster);
  facts.ephemeralRunners = facts.ephemeralRunners.filter((e) => e.cluster !== cluster);
  facts.nodes = facts.nodes.filter((n) => n.cluster !== cluster);
  facts.losses = facts.losses.filter((l) => l.cluster !== cluster);
  facts.erJobCache = facts.erJobCache.filter((e) => e.cluster !== cluster);
  facts.missingPods = facts.missingPods.filter((m) => m.cluster !== cluster);
  facts.runnerWarnings = facts.runnerWarnings.filter((w) => w.cluster !== cluster);
  facts.nodeSignals = facts.nodeSignals.filter((s) => s.cluster !== cluster);
  facts.listings = facts.listings.filter((l) => l.cluster !== cluster);
  facts.runnersOnNodes = facts.runnersOnNodes.filter((r) => r.cluster !== cluster);
}

export function addFacts(into: StoredFacts, more: StoredFacts): void {
  for (const k of Object.keys(more) as (keyof StoredFacts)[])
    (into[k] as unknown[]).push(...(more[k] as unknown[]));
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
