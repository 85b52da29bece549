/**
 * A large world on the project's own twins and dynalite, for the per-event cost tests and the
 * `scale` benchmark: EphemeralRunners and their pods across namespaces and clusters (Kubernetes
 * twins), jobs stored through the real store, and counters read from the twins' and dynalite's
 * own traffic (the API server's request log, a byte-counting proxy in front of dynalite).
 */
import type { Server } from 'node:http';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../../functions/adapters/bus/eventbridge-publisher.js';
import { OctokitGithubGateway } from '../../functions/adapters/github/github-gateway.js';
import { ClusterConnections } from '../../functions/adapters/kubernetes/cluster-connections.js';
import { DynamoFactsStore } from '../../functions/adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import type { KubeEvent } from '../../functions/domain/model/cluster-facts.js';
import type { JobRecord } from '../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../functions/domain/policy/policy.js';
import type { EngineDeps } from '../../functions/engine/engine-deps.js';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { EventBridgeSim } from '../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { ApiServer } from '../../sim/kube/api/api-server.js';
import { setCondition } from '../../sim/kube/api/object-utils.js';
import type { Pod } from '../../sim/kube/types.js';
import { Rng } from '../../sim/rng.js';
import { startCountingProxy } from './store-proxy.js';

export interface WorldSize {
  ephemeralRunners: number;
  storedJobs: number;
  clusters: number;
  namespaces: number;
}

/** Store traffic as dynalite answered it: items and bytes read, and the keys written. */
class StoreMeter {
  itemsRead = 0;
  bytesRead = 0;
  requests = 0;
  /** `pk sk` of each PutItem, in order. */
  writes: string[] = [];
  /** The key each Query asked for (its `:k`: a partition or an index key), in order. */
  queried: string[] = [];
  reset(): void {
    this.itemsRead = 0;
    this.bytesRead = 0;
    this.requests = 0;
    this.writes = [];
    this.queried = [];
  }
}

const SET = 'arc-linux';
const REPO = 'acme/app';
const RUNNERS_PER_NODE = 10;

type ArcObject = { metadata: Record<string, unknown> };
const T0 = Date.parse('2026-03-02T09:00:00Z');

export const runnerName = (ns: number, i: number) => `${SET}-n${ns}-runner-r${i}`;
export const namespaceName = (ns: number) => `arc-${ns}`;
export const nodeName = (n: number) => `ip-10-0-${Math.floor(n / 250)}-${n % 250}`;
const instanceOf = (n: number) => `i-${String(n).padStart(17, '0')}`;

export class ScaleWorld {
  readonly clock = new SimClock(T0);
  readonly kubes: ApiServer[] = [];
  readonly github = new GitHubSim({ clock: this.clock, seed: 11 });
  readonly bus = new EventBridgeSim();
  readonly meter = new StoreMeter();
  store!: DynamoFactsStore;
  deps!: EngineDeps;
  private dynamo: EmbeddedDynamo | undefined;
  private proxy: Server | undefined;
  /** Where each runner is: cluster index, namespace index, node index. */
  readonly layout: { cluster: number; ns: number; i: number; node: number }[] = [];

  constructor(readonly size: WorldSize) {}

  clusterName(c: number): string {
    return `cluster-${c}`;
  }

  async start(): Promise<void> {
    for (let c = 0; c < this.size.clusters; c++) {
      const kube = new ApiServer({
        clock: this.clock,
        rng: new Rng(100 + c),
        clusterName: this.clusterName(c),
        schemaFlavour: '0.13',
      });
      await kube.start();
      this.kubes.push(kube);
    }
    await this.github.start();
    this.dynamo = await startEmbeddedDynamo('runner-medic-scale');
    const proxyUrl = await this.startStoreProxy(this.dynamo.endpoint);
    const busUrl = await this.bus.start();
    // Populating a world writes up to 100,000 items; on a loaded machine dynalite may reset a
    // connection now and then, which the SDK retries as it would in production.
    const documents = createDocumentClient({
      ...this.dynamo.clientConfig,
      endpoint: proxyUrl,
      maxAttempts: 5,
    });
    this.store = new DynamoFactsStore(documents, this.dynamo.tableName);
    this.deps = {
      store: this.store,
      clusters: new ClusterConnections({
        clusters: Object.fromEntries(
          this.kubes.map((k, c) => [
            this.clusterName(c),
            {
              kind: 'kubeconfig' as const,
              kubeconfig: k.kubeconfig('runner-medic'),
              namespaces: this.namespacesOf(c),
            },
          ]),
        ),
        clock: this.clock,
        // Engine tests run several worlds at once on busy cores: a request's real 10 s timeout
        // would measure the machine's load, not the product.
        gateway: { requestTimeoutMs: 60_000 },
      }),
      github: new OctokitGithubGateway({
        baseUrl: this.github.baseUrl,
        appId: this.github.app.appId,
        privateKey: this.github.app.privateKey,
        remainingTimeMs: () => 60_000,
        writeSpacingMs: 0,
        retryBaseMs: 0,
        rateLimitSecondMs: 0,
        clock: this.clock,
      }),
      bus: new EventBridgePublisher(
        new EventBridgeClient({
          endpoint: busUrl,
          region: 'eu-west-1',
          credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
        }),
        { busName: 'runner-medic', sleep: async () => undefined },
      ),
      policy: async () => DEFAULT_POLICY,
      clock: this.clock,
      log: { info: () => undefined, warn: () => undefined },
      metrics: { count: () => undefined, milliseconds: () => undefined },
    };
  }

  /** Namespaces are spread over the clusters round-robin. */
  namespacesOf(cluster: number): string[] {
    const out: string[] = [];
    for (let ns = 0; ns < this.size.namespaces; ns++)
      if (ns % this.size.clusters === cluster) out.push(namespaceName(ns));
    return out;
  }

  /** Creates every EphemeralRunner, its Running pod, the nodes, and the stored jobs. */
  async populate(): Promise<void> {
    const { ephemeralRunners, namespaces, clusters } = this.size;
    const sets = new Map<number, ArcObject>();
    for (let ns = 0; ns < namespaces; ns++) {
      const kube = this.kubes[ns % clusters] as ApiServer;
      kube.api.create('admin', 'namespaces', undefined, { metadata: { name: namespaceName(ns) } });
      sets.set(
        ns,
        kube.api.create('arc', 'ephemeralrunnersets', namespaceName(ns), {
          apiVersion: 'actions.github.com/v1alpha1',
          kind: 'EphemeralRunnerSet',
          metadata: {
            name: `${SET}-n${ns}`,
            namespace: namespaceName(ns),
            labels: labels('runner-set', namespaceName(ns)),
          },
          spec: { replicas: 1, patchID: 0, ephemeralRunnerSpec: RUNNER_SPEC },
        }),
      );
    }
    const nodesCreated = new Set<string>();
    for (let r = 0; r < ephemeralRunners; r++) {
      const ns = r % namespaces;
      const i = Math.floor(r / namespaces);
      const cluster = ns % clusters;
      const node = Math.floor(r / RUNNERS_PER_NODE);
      this.layout.push({ cluster, ns, i, node });
      const kube = this.kubes[cluster] as ApiServer;
      const nodeKey = `${cluster}/${node}`;
      if (!nodesCreated.has(nodeKey)) {
        nodesCreated.add(nodeKey);
        kube.api.create('admin', 'nodes', undefined, {
          metadata: { name: nodeName(node), labels: {} },
          spec: { providerID: `aws:///eu-west-1a/${instanceOf(node)}` },
        });
        // Status is a subresource: a create ignores it, and the kubelet posts it.
        kube.api.modify(
          'kubelet',
          'nodes',
          undefined,
          nodeName(node),
          (o) =>
            void (o.status = {
              conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
            }),
          { subresource: 'status' },
        );
      }
      this.createRunner(kube, sets.get(ns) as ArcObject, namespaceName(ns), runnerName(ns, i), {
        node: nodeName(node),
        phase: 'Running',
        ...(r < this.size.storedJobs ? { jobId: runnerJobId(r) } : {}),
      });
    }
    await this.storeJobs();
  }

  /**
   * A runner as ARC and the kubelet leave it: its EphemeralRunner (owned by the set) and its pod
   * bound to `node`, in `phase`; `runnerId` once ARC has registered it; the job fields of the
   * stored job `jobId` when it runs one.
   */
  private createRunner(
    kube: ApiServer,
    set: ArcObject,
    namespace: string,
    name: string,
    at: RunnerState & { node: string },
  ): void {
    const er = kube.api.create('arc', 'ephemeralrunners', namespace, {
      apiVersion: 'actions.github.com/v1alpha1',
      kind: 'EphemeralRunner',
      metadata: {
        name,
        namespace,
        labels: labels('runner', namespace),
        ownerReferences: owner('EphemeralRunnerSet', set),
      },
      spec: RUNNER_SPEC,
    });
    kube.api.create('arc', 'pods', namespace, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace,
        labels: { ...labels('runner', namespace), 'actions-ephemeral-runner': 'True' },
        ownerReferences: owner('EphemeralRunner', er),
      },
      spec: { nodeName: at.node, containers: [{ name: 'runner', image: 'runner' }] },
    });
    this.setRunnerState(kube, namespace, name, at);
  }

  private setRunnerState(kube: ApiServer, namespace: string, name: string, at: RunnerState): void {
    const ready = at.phase === 'Running' ? 'True' : 'False';
    kube.api.modify(
      'kubelet',
      'pods',
      namespace,
      name,
      (p) => void (p.status = { phase: at.phase, conditions: [{ type: 'Ready', status: ready }] }),
      { subresource: 'status' },
    );
    kube.api.modify(
      'arc',
      'ephemeralrunners',
      namespace,
      name,
      (o) =>
        void (o.status = {
          phase: at.phase,
          ready: at.phase === 'Running',
          runnerName: name,
          ...(at.runnerId === undefined ? {} : { runnerId: at.runnerId }),
          // As ARC's listener writes them when the runner takes a job.
          ...(at.jobId === undefined
            ? {}
            : {
                jobRepositoryName: REPO,
                workflowRunId: jobRecord(at.jobId, null, 'in_progress').job.runId,
                jobDisplayName: 'build',
              }),
        }),
      { subresource: 'status' },
    );
  }

  /** A runner ARC creates now in namespace `ns`, its pod bound to runner `besideRunner`'s node. */
  addRunner(ns: number, name: string, besideRunner: number): void {
    const place = this.layout[besideRunner];
    if (!place) throw new Error(`no runner ${besideRunner}`);
    const kube = this.kubes[ns % this.size.clusters] as ApiServer;
    const set = kube.api.get('ephemeralrunnersets', namespaceName(ns), `${SET}-n${ns}`);
    this.createRunner(kube, set, namespaceName(ns), name, {
      node: nodeName(place.node),
      phase: 'Pending',
    });
  }

  /** The kubelet runs the pod and ARC records the runner id GitHub gave it. */
  registerRunner(ns: number, name: string, runnerId: number): void {
    const kube = this.kubes[ns % this.size.clusters] as ApiServer;
    this.setRunnerState(kube, namespaceName(ns), name, { phase: 'Running', runnerId });
  }

  /** The registered runner takes job `jobId`: ARC's listener writes its job fields. */
  takeJob(ns: number, name: string, runnerId: number, jobId: number): void {
    const kube = this.kubes[ns % this.size.clusters] as ApiServer;
    this.setRunnerState(kube, namespaceName(ns), name, { phase: 'Running', runnerId, jobId });
  }

  /** Jobs as webhooks would have stored them: most done long ago, one per runner in progress. */
  private async storeJobs(): Promise<void> {
    const now = this.clock.now();
    const batch: Promise<void>[] = [];
    for (let j = 0; j < this.size.storedJobs; j++) {
      const on = this.layout[j % Math.max(1, this.layout.length)];
      const runner = on && j < this.layout.length ? runnerName(on.ns, on.i) : null;
      batch.push(this.store.recordJob(jobRecord(runnerJobId(j), runner, 'in_progress'), now));
      if (batch.length >= 64) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
  }

  /** A job of the scale set queued `forMs` ago, as its webhook would have stored it. */
  async queueJob(jobId: number, forMs: number): Promise<void> {
    // With its App installation, as a job webhook carries it: the org is then a known owner.
    const record = { ...jobRecord(jobId, null, 'queued'), installationId: 1 };
    const now = this.clock.now();
    record.job.createdAt = new Date(now - forMs).toISOString();
    record.job.startedAt = null;
    await this.store.recordJob(record, now);
  }

  /** Counts Kubernetes requests runner-medic made from now on. */
  kubeMark(): number[] {
    return this.kubes.map((k) => k.audit.requests.length);
  }

  kubeSince(mark: number[]) {
    const requests = this.kubes.flatMap((k, c) =>
      k.audit.requests.slice(mark[c] ?? 0).filter((r) => r.by === 'runner-medic'),
    );
    // One node read by name is a list with `metadata.name=` (RBAC grants `list` on nodes only):
    // it reads one object, so it is not counted as a list.
    const lists = requests.filter(
      (r) =>
        (r.verb === 'list' || r.verb === 'watch') &&
        !(r.path.startsWith('/api/v1/nodes?') && r.path.includes('fieldSelector=metadata.name')),
    );
    return {
      calls: requests.length,
      lists: lists.length,
      /** A list not scoped to a namespace, other than nodes (a ClusterRole on nodes only). */
      clusterWideLists: lists.filter(
        (r) => !r.path.includes('/namespaces/') && !r.path.startsWith('/api/v1/nodes'),
      ).length,
      requests,
    };
  }

  githubMark(): number {
    return this.github.requests().length;
  }

  githubSince(mark: number): number {
    return this.github.requests().length - mark;
  }

  /** A kubelet eviction of one runner's pod, and the Event the exporter forwards. */
  evict(r: number): KubeEvent {
    const at = this.layout[r] as { cluster: number; ns: number; i: number; node: number };
    const kube = this.kubes[at.cluster] as ApiServer;
    const name = runnerName(at.ns, at.i);
    const namespace = namespaceName(at.ns);
    const pod = kube.api.get('pods', namespace, name) as { metadata: { uid: string } };
    kube.api.modify(
      'kubelet',
      'pods',
      namespace,
      name,
      (p) =>
        void (p.status = {
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node was low on resource: memory. ',
        }),
      { subresource: 'status' },
    );
    return {
      cluster: this.clusterName(at.cluster),
      name: `${name}.evicted`,
      namespace,
      uid: `event-${r}`,
      reason: 'Evicted',
      message: 'The node was low on resource: memory. ',
      type: 'Warning',
      sourceComponent: 'kubelet',
      sourceHost: nodeName(at.node),
      reportingComponent: 'kubelet',
      annotations: {},
      involvedObject: {
        kind: 'Pod',
        namespace,
        name,
        uid: pod.metadata.uid,
        apiVersion: 'v1',
        fieldPath: null,
        labels: {},
        annotations: {},
        ownerReferences: [],
        deleted: false,
      },
      count: 1,
      at: this.clock.now(),
    };
  }

  /** ARC gave up on runner `r`'s pod: its EphemeralRunner is Failed (rule 1 frees the slot). */
  failRunner(r: number): void {
    const at = this.layout[r] as { cluster: number; ns: number; i: number };
    const kube = this.kubes[at.cluster] as ApiServer;
    kube.api.modify(
      'arc',
      'ephemeralrunners',
      namespaceName(at.ns),
      runnerName(at.ns, at.i),
      (o) =>
        void (o.status = {
          phase: 'Failed',
          reason: 'TooManyPodFailures',
          message: 'Pod has failed to start more than 5 times',
          ready: false,
        }),
      { subresource: 'status' },
    );
  }

  /** The stored job of runner `r`, completed (successfully: a typical webhook). */
  completedJob(r: number): JobRecord {
    const at = this.layout[r] as { ns: number; i: number };
    const record = jobRecord(1_000_000 + r, runnerName(at.ns, at.i), 'completed');
    return record;
  }

  /** What the sweep records about where the scale set and its runner sets live. */
  scaleSetRegistry(cluster: number): Record<string, string[]> {
    const out: Record<string, string[]> = {
      [SET]: this.namespacesOf(cluster).map((ns) => `${this.clusterName(cluster)}/${ns}`),
    };
    for (let ns = 0; ns < this.size.namespaces; ns++)
      if (ns % this.size.clusters === cluster)
        out[`runner-set:${SET}-n${ns}`] = [`${this.clusterName(cluster)}/${namespaceName(ns)}`];
    return out;
  }

  /**
   * The kubelet of runner `r`'s node posts its status: `Ready` as before with a new heartbeat
   * time (its periodic report), or not ready (NotReady, as the node lifecycle controller sets it).
   * Returns the namespaces of the runners on that node.
   */
  reportNodeOfRunner(r: number, ready: boolean): Set<string> {
    const at = this.layout[r] as { cluster: number; node: number };
    const kube = this.kubes[at.cluster] as ApiServer;
    const condition = ready
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady' }
      : { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' };
    kube.api.modify(
      'kubelet',
      'nodes',
      undefined,
      nodeName(at.node),
      (o) =>
        void (o.status = {
          conditions: [
            { ...condition, lastHeartbeatTime: new Date(this.clock.now()).toISOString() },
          ],
        }),
      { subresource: 'status' },
    );
    const here = this.layout.filter((o) => o.cluster === at.cluster && o.node === at.node);
    // The node lifecycle controller marks a not-ready node's pods not ready (MarkPodsNotReady,
    // pkg/controller/nodelifecycle), and the kubelet marks them ready again once it is back:
    // those pod changes, not the node's, are what the sweep follows.
    const podReady = ready ? 'True' : 'False';
    for (const o of here) {
      const ns = namespaceName(o.ns);
      const name = runnerName(o.ns, o.i);
      const pod = kube.api.tryGet('pods', ns, name);
      const conditions = (pod?.status as { conditions?: { type: string; status: string }[] })
        ?.conditions;
      const now = conditions?.find((c) => c.type === 'Ready')?.status ?? 'True';
      if (!pod || now === podReady) continue;
      kube.api.modify<Pod>(
        ready ? 'kubelet' : 'node-lifecycle-controller',
        'pods',
        ns,
        name,
        (p) =>
          setCondition(
            p,
            { type: 'Ready', status: podReady, reason: ready ? 'PodReady' : 'NodeLost' },
            this.clock.now(),
          ),
        { subresource: 'status' },
      );
    }
    return new Set(here.map((o) => namespaceName(o.ns)));
  }

  /**
   * What the sweep records about the node a runner is on: the node of its EC2 instance (from
   * the Node's providerID) and each runner on it that took a job (here every one, each running
   * its stored job), with the identity it proved and its EphemeralRunner's job fields.
   */
  async recordNodeOfRunner(r: number): Promise<void> {
    const at = this.layout[r] as { cluster: number; node: number };
    const cluster = this.clusterName(at.cluster);
    const kube = this.kubes[at.cluster] as ApiServer;
    await this.store.recordInstance(
      instanceOf(at.node),
      cluster,
      nodeName(at.node),
      this.clock.now(),
    );
    for (const [index, other] of this.layout.entries()) {
      if (other.cluster !== at.cluster || other.node !== at.node) continue;
      const namespace = namespaceName(other.ns);
      const name = runnerName(other.ns, other.i);
      const uidOf = (kind: string) =>
        (kube.api.get(kind, namespace, name) as { metadata: { uid: string } }).metadata.uid;
      await this.store.recordRunnerOnNode(
        {
          cluster,
          namespace,
          name,
          nodeName: nodeName(at.node),
          podUid: uidOf('pods'),
          ephemeralRunnerUid: uidOf('ephemeralrunners'),
          scaleSet: SET,
          runnerId: null,
          seenAt: this.clock.now(),
          job: {
            jobId: null,
            jobRequestId: null,
            jobRepositoryName: REPO,
            jobWorkflowRef: null,
            workflowRunId: jobRecord(runnerJobId(index), null, 'in_progress').job.runId,
            jobDisplayName: 'build',
          },
        },
        this.clock.now(),
      );
    }
  }

  /** The names of the runners on the node of runner `r`. */
  runnersOnNodeOf(r: number): string[] {
    const at = this.layout[r] as { cluster: number; node: number };
    return this.layout
      .filter((o) => o.cluster === at.cluster && o.node === at.node)
      .map((o) => runnerName(o.ns, o.i));
  }

  /** The runners on the node of runner `r`, and how many namespaces they come from. */
  neighboursOf(r: number): { runners: number; namespaces: number } {
    const at = this.layout[r] as { cluster: number; node: number };
    const here = this.layout.filter((o) => o.cluster === at.cluster && o.node === at.node);
    return { runners: here.length, namespaces: new Set(here.map((o) => o.ns)).size };
  }

  instanceOfRunner(r: number): string {
    return instanceOf((this.layout[r] as { node: number }).node);
  }

  async stop(): Promise<void> {
    await this.bus.stop();
    await new Promise<void>((resolve) => this.proxy?.close(() => resolve()) ?? resolve());
    await this.dynamo?.close();
    await this.github.stop();
    for (const k of this.kubes) await k.stop();
  }

  /** A pass-through proxy in front of dynalite that counts the items and bytes it answered. */
  private async startStoreProxy(target: string): Promise<string> {
    const { url, server } = await startCountingProxy(target, ({ operation, body, payload }) => {
      if (operation === 'PutItem') this.meter.writes.push(putKeyOf(body));
      if (operation === 'Query') this.meter.queried.push(queriedPartition(body));
      if (['Query', 'Scan', 'GetItem', 'BatchGetItem'].includes(operation)) {
        this.meter.requests++;
        this.meter.bytesRead += payload.length;
        try {
          const parsed = JSON.parse(payload.toString('utf8')) as { Count?: number; Item?: object };
          this.meter.itemsRead += parsed.Count ?? (parsed.Item ? 1 : 0);
        } catch {
          // A body that is not JSON reads no item.
        }
      }
    });
    this.proxy = server;
    return url;
  }
}

const RUNNER_SPEC = {
  githubConfigUrl: 'https://github.com/acme',
  githubConfigSecret: 's',
  runnerScaleSetId: 1,
  spec: { containers: [{ name: 'runner', image: 'runner' }] },
};

function labels(component: string, namespace: string): Record<string, string> {
  return {
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    'app.kubernetes.io/version': '0.13.0',
    'actions.github.com/scale-set-name': SET,
    'actions.github.com/scale-set-namespace': namespace,
  };
}

function owner(kind: string, o: { metadata: Record<string, unknown> }) {
  return [
    {
      apiVersion: 'actions.github.com/v1alpha1',
      kind,
      name: String(o.metadata.name),
      uid: String(o.metadata.uid),
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
}

/** A runner's state as ARC's EphemeralRunner and the kubelet's pod show it. */
interface RunnerState {
  phase: 'Pending' | 'Running';
  runnerId?: number;
  /** The stored job it runs. */
  jobId?: number;
}

/** The stored in-progress job of the runner at `index` of the layout (the first `storedJobs`). */
const runnerJobId = (index: number) => 1_000_000 + index;

function jobRecord(jobId: number, runner: string | null, status: string): JobRecord {
  return {
    repository: { id: 1, fullName: REPO, owner: 'acme', name: 'app' },
    installationId: null,
    annotations: null,
    job: {
      jobId,
      runId: 9_000_000_000 + jobId,
      runAttempt: 1,
      name: 'build',
      workflowName: 'CI',
      headBranch: 'main',
      labels: [SET],
      status,
      conclusion: status === 'completed' ? 'success' : null,
      runnerId: null,
      runnerName: runner,
      runnerGroupId: null,
      runnerGroupName: null,
      htmlUrl: `https://github.com/${REPO}/actions/runs/${9_000_000_000 + jobId}/job/${jobId}`,
      createdAt: new Date(T0 - 600_000).toISOString(),
      startedAt: new Date(T0 - 500_000).toISOString(),
      completedAt: status === 'completed' ? new Date(T0).toISOString() : null,
    },
  };
}

/** The `pk sk` of a PutItem request body (DynamoDB JSON), or '?' when it cannot be read. */
function queriedPartition(body: Buffer): string {
  try {
    const values = (
      JSON.parse(body.toString('utf8')) as {
        ExpressionAttributeValues?: Record<string, { S?: string }>;
      }
    ).ExpressionAttributeValues;
    return values?.[':k']?.S ?? '?';
  } catch {
    return '?';
  }
}

function putKeyOf(body: Buffer): string {
  try {
    const item = (JSON.parse(body.toString('utf8')) as { Item?: Record<string, { S?: string }> })
      .Item;
    return `${item?.pk?.S ?? '?'} ${item?.sk?.S ?? '?'}`;
  } catch {
    return '?';
  }
}
