/**
 * A busy, healthy org for the `steady` bench: runner-medic as deployed (config/compose-*.ts on
 * loopback clients, the real github-webhook, remediate and reconcile handlers) around the twins.
 * Every runner is an ARC EphemeralRunner with its pod (ARC's own object shapes, from
 * sim/kube/arc/resource-builder.ts) and a registration at the GitHub twin under the App's
 * installation; jobs are queued at the GitHub twin, taken by idle runners, and their webhooks
 * delivered; a finished runner is removed and replaced as ARC's EphemeralRunner and
 * EphemeralRunnerSet controllers do. Costs are read from the twins' and dynalite's own traffic.
 */
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { composeEngine, type EngineProvider } from '../../functions/config/compose-engine.js';
import { composeIngress } from '../../functions/config/compose-ingress.js';
import { loadSettings } from '../../functions/config/settings.js';
import { DEFAULT_POLICY } from '../../functions/domain/policy/policy.js';
import { createGithubWebhookHandler } from '../../functions/handlers/github-webhook.js';
import { createReconcileHandler } from '../../functions/handlers/reconcile.js';
import { createRemediateHandler } from '../../functions/handlers/remediate.js';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import type { FunctionUrlHandler, LocalServer } from '../../functions/serve/function-url-server.js';
import { startFunctionUrlServer } from '../../functions/serve/function-url-server.js';
import { localLambdaContext } from '../../functions/serve/lambda-context.js';
import { loopbackClients } from '../../sandbox/local/loopback-clients.js';
import { WAKE_SOURCE } from '../../functions/ports/wake-scheduler.js';
import type { JobAssignment } from '../../sim/actions-service.js';
import { EventBridgeSim, type ReceivedEntry } from '../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { ApiServer } from '../../sim/kube/api/api-server.js';
import { arcBehaviourWith } from '../../sim/kube/arc/arc-version.js';
import {
  controllerRef,
  defaultRunnerTemplate,
  newEphemeralRunner,
  newRunnerPod,
} from '../../sim/kube/arc/resource-builder.js';
import type { EphemeralRunnerSet, KubeObject } from '../../sim/kube/types.js';
import { Rng } from '../../sim/rng.js';
import { startCountingProxy } from './store-proxy.js';

export interface SteadySize {
  runners: number;
  repositories: number;
  jobsPerHour: number;
  clusters: number;
  namespaces: number;
}

export type SteadyFunction = 'github-webhook' | 'remediate' | 'reconcile';

/** Items dynalite answered and items written, as its own request bodies say. */
class StoreTraffic {
  reads = 0;
  writes = 0;
  /** Writes by operation and item kind: the key's partition and sort key prefixes (`Put JOB#/JOB`). */
  readonly writesByKind = new Map<string, number>();
  /** Items read by kind, as written. */
  readonly readsByKind = new Map<string, number>();

  read(items: readonly unknown[]): void {
    this.reads += items.length;
    for (const item of items) {
      const kind = itemKind(item);
      this.readsByKind.set(kind, (this.readsByKind.get(kind) ?? 0) + 1);
    }
  }

  wrote(item: unknown, operation: string): void {
    this.writes++;
    const kind = `${operation} ${itemKind(item)}`;
    this.writesByKind.set(kind, (this.writesByKind.get(kind) ?? 0) + 1);
  }
}

/** `pk`'s prefix up to its first `#`, and `sk`'s, of a DynamoDB-JSON key or item. */
function itemKind(item: unknown): string {
  const attribute = (name: string): string => {
    const value = (item as Record<string, { S?: string } | undefined> | undefined)?.[name]?.S;
    if (value === undefined) return '?';
    return (/^[^#:]*[#:]?/.exec(value)?.[0] ?? value).replace(/\d{6,}/g, 'N');
  };
  return `${attribute('pk')}/${attribute('sk')}`;
}

/** The key or item one write names, from its request (Put: Item; Update, Delete: Key). */
function writtenItem(request: Record<string, unknown>): unknown {
  const body = (request.Put ??
    request.Update ??
    request.Delete ??
    request.PutRequest ??
    request.DeleteRequest ??
    request) as Record<string, unknown>;
  return body.Item ?? body.Key;
}

const ORG = 'acme';
const SCALE_SET = 'arc-linux';
const WORKFLOW = 'CI';
const JOB_MS = 5 * 60_000;
const RUNNERS_PER_NODE = 10;
const SECRET = 'steady-webhook-secret';
const T0 = Date.parse('2026-03-02T09:00:00Z');
const ARC = arcBehaviourWith('0.13');

const namespaceName = (ns: number) => `arc-${ns}`;
const NODE_STATUS_REPORT_MS = 5 * 60_000;
const readyNode = (at: number) => [
  {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    lastHeartbeatTime: new Date(at).toISOString(),
  },
];
const nodeName = (c: number, n: number) => `ip-10-${c}-${Math.floor(n / 250)}-${n % 250}`;

interface RunnerAt {
  cluster: number;
  namespace: string;
  name: string;
}

export class SteadyWorld {
  readonly clock = new SimClock(T0);
  readonly kubes: ApiServer[] = [];
  readonly github = new GitHubSim({ clock: this.clock, seed: 24 });
  readonly bus = new EventBridgeSim();
  readonly store = new StoreTraffic();
  readonly invocations: Record<SteadyFunction, number> = {
    'github-webhook': 0,
    remediate: 0,
    reconcile: 0,
  };
  readonly busyMs: Record<SteadyFunction, number> = {
    'github-webhook': 0,
    remediate: 0,
    reconcile: 0,
  };
  readonly errors: string[] = [];
  jobsStarted = 0;
  private readonly idle: RunnerAt[] = [];
  private readonly busy = new Map<string, RunnerAt>();
  private readonly sets = new Map<string, EphemeralRunnerSet>();
  private scaleSetId = 0;
  /** Runner pods placed so far in each cluster (RUNNERS_PER_NODE a node). */
  private readonly placed: number[] = [];
  private dynamo: EmbeddedDynamo | undefined;
  private proxy: Server | undefined;
  private webhookServer: LocalServer | undefined;
  private remediate: ((event: object) => Promise<void>) | undefined;
  private reconcile: ((event: object) => Promise<void>) | undefined;
  private stopped = false;

  constructor(readonly size: SteadySize) {}

  async start(): Promise<void> {
    for (let c = 0; c < this.size.clusters; c++) {
      const kube = new ApiServer({
        clock: this.clock,
        rng: new Rng(200 + c),
        clusterName: `cluster-${c}`,
        schemaFlavour: '0.13',
      });
      await kube.start();
      this.kubes.push(kube);
    }
    await this.github.start();
    this.dynamo = await startEmbeddedDynamo('runner-medic-steady');
    const endpoint = await this.startStoreProxy(this.dynamo.endpoint);
    const busUrl = await this.bus.start();
    const common = {
      TABLE_NAME: this.dynamo.tableName,
      DYNAMODB_ENDPOINT: endpoint,
      EVENTBRIDGE_ENDPOINT: busUrl,
      EVENT_BUS_NAME: 'runner-medic',
    };
    const clients = loopbackClients(this.clock);
    const logger = () => new Logger({ serviceName: 'runner-medic', logLevel: 'SILENT' });
    const metrics = () => new Metrics({ namespace: 'RunnerMedic', serviceName: 'runner-medic' });
    const webhook = createGithubWebhookHandler({
      ingress: composeIngress(
        loadSettings({ ...common, GITHUB_WEBHOOK_SECRET: SECRET }, 'webhook'),
        clients,
      ),
      logger: logger(),
      metrics: metrics(),
    });
    const timedWebhook: FunctionUrlHandler = (event, context) =>
      this.timed('github-webhook', () => webhook(event, context));
    this.webhookServer = await startFunctionUrlServer({ '/webhook': timedWebhook }, 0);
    this.github.setWebhookTarget({ url: `${this.webhookServer.url}/webhook`, secret: SECRET });

    const clusters = this.kubes.map((k, c) => [
      `cluster-${c}`,
      {
        kind: 'kubeconfig',
        kubeconfig: k.kubeconfig('runner-medic'),
        namespaces: this.namespacesOf(c),
      },
    ]);
    const composed = composeEngine(
      loadSettings(
        {
          ...common,
          GITHUB_API_URL: this.github.baseUrl,
          GITHUB_APP_CREDENTIALS: JSON.stringify({
            appId: this.github.app.appId,
            privateKey: this.github.app.privateKey,
          }),
          CLUSTERS: JSON.stringify(Object.fromEntries(clusters)),
        },
        'engine',
      ),
      clients,
    );
    const engine: EngineProvider = async (remainingTimeMs) => {
      const setup = await composed(remainingTimeMs);
      const wake = { wakeAt: async (at: number) => this.scheduleWake(at) };
      return { ...setup, deps: { ...setup.deps, policy: async () => DEFAULT_POLICY, wake } };
    };
    const remediate = createRemediateHandler({ engine, logger: logger(), metrics: metrics() });
    const reconcile = createReconcileHandler({ engine, logger: logger(), metrics: metrics() });
    // The deployed timeouts (serverless.yml): remediate 60 s, reconcile 120 s.
    this.remediate = (e) => this.invoke('remediate', () => remediate(e, context('remediate', 60)));
    this.reconcile = (e) => this.invoke('reconcile', () => reconcile(e, context('reconcile', 120)));
    this.bus.onEntry((entry) => this.route(entry));
  }

  /** The org, its installation and repositories, and every runner registered and online. */
  async populate(): Promise<void> {
    this.github.createOrg(ORG);
    this.github.createInstallation(ORG);
    for (let r = 0; r < this.size.repositories; r++) {
      const repo = `${ORG}/repo-${r}`;
      this.github.createRepo(repo);
      this.github.defineWorkflow(repo, {
        name: WORKFLOW,
        jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: JOB_MS }],
      });
    }
    this.scaleSetId = this.github.actions.registerScaleSet({ owner: ORG, name: SCALE_SET });
    for (let ns = 0; ns < this.size.namespaces; ns++) this.createRunnerSet(ns);
    for (let r = 0; r < this.size.runners; r++) this.createRunner(r % this.size.namespaces, true);
    // ARC's listener hands a queued job to an idle runner of the scale set.
    this.github.onJobQueued(() => {
      this.clock.after(2_000, 'idle runner takes a job', () => this.takeJob());
    });
    this.github.actions.onJobFinished((name, job) => this.finish(name, job));
  }

  /**
   * Plays `ms` of simulated time: jobs queued at an even pace over the repositories, the sweep
   * at the deployed schedule (serverless.yml `sweepRate`, first at the start, as a deployment).
   */
  async play(ms: number, sweepEveryMs: number): Promise<void> {
    const end = this.clock.now() + ms;
    const gap = 3_600_000 / this.size.jobsPerHour;
    let job = 0;
    for (let at = this.clock.now() + gap / 2; at < end; at += gap) {
      const repo = `${ORG}/repo-${job++ % this.size.repositories}`;
      this.clock.at(at, 'job queued', () => void this.github.triggerRun(repo, WORKFLOW));
    }
    for (let at = this.clock.now() + 1; at < end; at += sweepEveryMs)
      this.clock.at(at, 'reconcile sweep', () =>
        this.reconcile?.({ source: 'aws.events', 'detail-type': 'Scheduled Event' }),
      );
    await this.clock.advanceTo(end);
  }

  /** Registered runners of the org at the GitHub twin (the GitHub side of the world). */
  registeredRunners(): number {
    return this.github.runners().filter((r) => r.registered && r.scaleSet.owner === ORG).length;
  }

  githubMark(): number {
    return this.github.requests().length;
  }

  kubeMark(): number[] {
    return this.kubes.map((k) => k.audit.requests.length);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.github.setWebhookTarget(undefined);
    await this.webhookServer?.close();
    await this.bus.stop();
    await new Promise<void>((resolve) => this.proxy?.close(() => resolve()) ?? resolve());
    await this.dynamo?.close();
    await this.github.stop();
    for (const k of this.kubes) await k.stop();
  }

  /** Namespaces are spread over the clusters round-robin. */
  private namespacesOf(cluster: number): string[] {
    const out: string[] = [];
    for (let ns = 0; ns < this.size.namespaces; ns++)
      if (ns % this.size.clusters === cluster) out.push(namespaceName(ns));
    return out;
  }

  private kubeOf(ns: number): ApiServer {
    return this.kubes[ns % this.size.clusters] as ApiServer;
  }

  private createRunnerSet(ns: number): void {
    const kube = this.kubeOf(ns);
    const namespace = namespaceName(ns);
    kube.api.create('admin', 'namespaces', undefined, { metadata: { name: namespace } });
    const labels = {
      'app.kubernetes.io/part-of': 'gha-runner-scale-set',
      'app.kubernetes.io/component': 'runner-set',
      'app.kubernetes.io/version': ARC.chartVersion,
      'actions.github.com/scale-set-name': SCALE_SET,
      'actions.github.com/scale-set-namespace': namespace,
      'actions.github.com/organization': ORG,
    };
    const set = kube.api.create('arc', 'ephemeralrunnersets', namespace, {
      apiVersion: 'actions.github.com/v1alpha1',
      kind: 'EphemeralRunnerSet',
      metadata: { generateName: `${SCALE_SET}-`, namespace, labels },
      spec: {
        replicas: Math.ceil(this.size.runners / this.size.namespaces),
        patchID: 0,
        ephemeralRunnerSpec: {
          githubConfigUrl: `https://github.com/${ORG}`,
          githubConfigSecret: 'github-app',
          runnerScaleSetId: this.scaleSetId,
          spec: defaultRunnerTemplate().spec,
        },
      },
    }) as EphemeralRunnerSet;
    this.sets.set(namespace, set);
  }

  /**
   * One EphemeralRunner as ARC creates it: the object, its JIT registration at GitHub (runner id
   * in status), its pod bound to a node, then Running and online. `now`: all at once (populate).
   */
  private createRunner(ns: number, now: boolean): void {
    const kube = this.kubeOf(ns);
    const cluster = ns % this.size.clusters;
    const namespace = namespaceName(ns);
    const set = this.sets.get(namespace) as EphemeralRunnerSet;
    const template = newEphemeralRunner(set, ARC);
    template.metadata.finalizers = [];
    const er = createWithGeneratedName(kube, namespace, template);
    const name = er.metadata.name as string;
    const runnerId = this.github.actions.registerRunner(this.scaleSetId, name);
    setStatus(kube, 'ephemeralrunners', namespace, name, { runnerId, runnerName: name });
    const pod = newRunnerPod(er as never, ARC);
    const node = this.nodeFor(cluster);
    pod.spec.nodeName = node;
    pod.metadata.ownerReferences = [controllerRef(er)];
    kube.api.create('arc', 'pods', namespace, pod);
    setStatus(kube, 'pods', namespace, name, { phase: 'Pending' });
    const running = () => {
      if (this.stopped) return;
      setStatus(kube, 'pods', namespace, name, {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
      });
      setStatus(kube, 'ephemeralrunners', namespace, name, { phase: 'Running', ready: true });
      this.online({ cluster, namespace, name });
    };
    if (now) running();
    else this.clock.after(10_000, 'runner pod running', running);
  }

  /** A node per RUNNERS_PER_NODE runners (its Node object created with the first). */
  private nodeFor(cluster: number): string {
    const n = this.placed[cluster] ?? 0;
    this.placed[cluster] = n + 1;
    const node = nodeName(cluster, Math.floor(n / RUNNERS_PER_NODE));
    if (n % RUNNERS_PER_NODE === 0) {
      const kube = this.kubes[cluster] as ApiServer;
      kube.api.create('admin', 'nodes', undefined, {
        metadata: { name: node, labels: {} },
        spec: { providerID: `aws:///eu-west-1a/i-${String(cluster * 1e8 + n).padStart(17, '0')}` },
      });
      this.reportNodeStatus(kube, node, (n * 7_919) % NODE_STATUS_REPORT_MS);
    }
    return node;
  }

  /**
   * The kubelet posts its node's status (a create ignores status: it is a subresource), then
   * again when it changes or every nodeStatusReportFrequency (5 min by default, kubelet
   * configuration; the Lease carries the 10 s heartbeat since Kubernetes 1.17): an unchanged,
   * healthy node is still one MODIFIED event every 5 minutes.
   */
  private reportNodeStatus(kube: ApiServer, node: string, nextInMs = NODE_STATUS_REPORT_MS): void {
    if (this.stopped) return;
    kube.api.modify(
      'kubelet',
      'nodes',
      undefined,
      node,
      (o) => void (o.status = { conditions: readyNode(this.clock.now()) }),
      { subresource: 'status' },
    );
    this.clock.after(nextInMs, 'kubelet status report', () => this.reportNodeStatus(kube, node));
  }

  /** The runner process connects and asks for work. */
  private online(runner: RunnerAt): void {
    const job = this.github.actions.acquireJob(runner.name);
    if (job) this.started(runner, job);
    else this.idle.push(runner);
  }

  private takeJob(): void {
    while (this.idle.length > 0) {
      const runner = this.idle.shift() as RunnerAt;
      const job = this.github.actions.acquireJob(runner.name);
      if (!job) continue;
      this.started(runner, job);
      return;
    }
  }

  /** ARC's listener writes the job it was handed into the EphemeralRunner's status. */
  private started(runner: RunnerAt, job: JobAssignment): void {
    this.jobsStarted++;
    this.busy.set(runner.name, runner);
    setStatus(
      this.kubes[runner.cluster] as ApiServer,
      'ephemeralrunners',
      runner.namespace,
      runner.name,
      {
        jobRequestId: job.runnerRequestId,
        jobId: job.jobGuid,
        jobRepositoryName: job.repository,
        jobWorkflowRef: job.workflowRef,
        workflowRunId: job.runId,
        jobDisplayName: job.displayName,
      },
    );
  }

  /**
   * The runner exits 0 after its job: its pod Succeeded; ARC's EphemeralRunner controller deletes
   * the pod and the EphemeralRunner (the registration ended with the job), and the
   * EphemeralRunnerSet creates a replacement.
   */
  private finish(name: string, job: JobAssignment): void {
    void job;
    const runner = this.busy.get(name);
    if (!runner) return;
    this.busy.delete(name);
    const kube = this.kubes[runner.cluster] as ApiServer;
    this.clock.after(1_000, 'runner exits', () => {
      if (this.stopped) return;
      setStatus(kube, 'pods', runner.namespace, name, { phase: 'Succeeded' });
      this.clock.after(1_000, 'ARC removes a finished runner', () => {
        if (this.stopped) return;
        kube.api.delete('arc', 'pods', runner.namespace, name, {});
        kube.api.delete('arc', 'ephemeralrunners', runner.namespace, name, {});
        this.createRunner(Number(runner.namespace.slice('arc-'.length)), false);
      });
    });
  }

  private route(entry: ReceivedEntry): void {
    if (entry.DetailType === 'Remediation') return;
    const detail = JSON.parse(entry.Detail) as unknown;
    this.clock.after(500, `bus ${entry.DetailType}`, () =>
      this.remediate?.({
        source: entry.Source,
        'detail-type': entry.DetailType,
        detail,
        id: 'steady',
        time: new Date(this.clock.now()).toISOString(),
      }),
    );
  }

  private scheduleWake(at: number): void {
    this.clock.at(at, 'wake', () =>
      this.remediate?.({ source: WAKE_SOURCE, 'detail-type': 'Wake', detail: {} }),
    );
  }

  private async invoke(fn: SteadyFunction, run: () => Promise<unknown>): Promise<void> {
    if (this.stopped) return;
    try {
      await this.timed(fn, run);
    } catch (error) {
      this.errors.push(`${fn} at ${this.clock.now()}: ${(error as Error).message}`);
    }
  }

  private async timed<T>(fn: SteadyFunction, run: () => Promise<T>): Promise<T> {
    this.invocations[fn]++;
    const t0 = performance.now();
    try {
      return await run();
    } finally {
      this.busyMs[fn] += performance.now() - t0;
    }
  }

  /** The store's proxy counts the items dynalite answered and wrote, for answers that succeeded. */
  private async startStoreProxy(target: string): Promise<string> {
    const { url, server } = await startCountingProxy(
      target,
      ({ operation, status, body, payload }) => {
        if (status < 300) this.count(operation, body, payload);
      },
    );
    this.proxy = server;
    return url;
  }

  private count(operation: string, body: Buffer, payload: Buffer): void {
    const parse = (b: Buffer) => JSON.parse(b.toString('utf8')) as Record<string, unknown>;
    if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation))
      this.store.wrote(writtenItem(parse(body)), operation.replace('Item', ''));
    else if (operation === 'BatchWriteItem')
      for (const items of Object.values(parse(body).RequestItems as Record<string, unknown[]>))
        for (const item of items)
          this.store.wrote(writtenItem(item as Record<string, unknown>), 'BatchWrite');
    else if (operation === 'TransactWriteItems')
      for (const item of parse(body).TransactItems as Record<string, unknown>[])
        this.store.wrote(writtenItem(item), 'TransactWrite');
    else if (operation === 'GetItem') {
      const item = parse(payload).Item;
      this.store.read(item ? [item] : []);
    } else if (operation === 'Query' || operation === 'Scan')
      this.store.read((parse(payload).Items as unknown[] | undefined) ?? []);
    else if (operation === 'BatchGetItem')
      for (const items of Object.values(parse(payload).Responses as Record<string, unknown[]>))
        this.store.read(items);
  }
}

/**
 * A generated name can already exist (the API server answers 409 AlreadyExists, as
 * `metadata.generateName` documents); ARC's controller then tries again on its next reconcile.
 */
function createWithGeneratedName(kube: ApiServer, namespace: string, template: object): KubeObject {
  for (let attempt = 1; ; attempt++)
    try {
      return kube.api.create('arc', 'ephemeralrunners', namespace, template) as KubeObject;
    } catch (error) {
      if ((error as { code?: number }).code !== 409 || attempt >= 5) throw error;
    }
}

function context(fn: string, timeoutS: number) {
  return localLambdaContext(`runner-medic-steady-${fn}`, timeoutS * 1000);
}

function setStatus(
  kube: ApiServer,
  resource: string,
  namespace: string,
  name: string,
  fields: Record<string, unknown>,
): void {
  kube.api.modify(
    resource === 'pods' ? 'kubelet' : 'arc',
    resource,
    namespace,
    name,
    (o) => void (o.status = { ...((o.status as object | undefined) ?? {}), ...fields }),
    { subresource: 'status' },
  );
}
