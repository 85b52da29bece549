/**
 * SimCluster: a loopback twin of an EKS cluster running ARC in scale-set mode, with kubelets,
 * the default scheduler, node lifecycle/PodGC, Karpenter and EC2, all on one SimClock and one
 * seed. The API server speaks the real protocol on 127.0.0.1 for runner-medic, client-node and
 * kubectl; the models act through the same API semantics, each under its own actor name.
 */
import type { ActionsService } from '../actions-service.js';
import { SimClock } from '../clock.js';
import { Rng } from '../rng.js';
import { ApiServer } from './api/api-server.js';
import type { AuditLog } from './api/audit.js';
import type { KubeApi } from './api/kube-api.js';
import { ARC_API_VERSION } from './api/resources.js';
import { Arc } from './arc/arc.js';
import type { ArcOverrides, ArcVersion } from './arc/arc-version.js';
import { defaultRunnerTemplate } from './arc/resource-builder.js';
import { EventBus } from './export/event-bus.js';
import { EventExporter, type ExporterRouting } from './export/event-exporter.js';
import { Faults } from './faults.js';
import { applyManifest, applyManifestFile, type LoadManifestOptions } from './manifest.js';
import { InMemoryActionsService } from './in-memory-actions-service.js';
import { Ec2 } from './models/ec2.js';
import { EventRecorder } from './models/event-recorder.js';
import { Karpenter } from './models/karpenter.js';
import { Kubelets } from './models/kubelet.js';
import type { SigtermBehaviour } from './models/runner-process.js';
import {
  DEFAULT_TIMINGS,
  type LogEntry,
  type ModelContext,
  type Timings,
} from './models/model-context.js';
import { NodeLifecycle } from './models/node-lifecycle.js';
import { nodeName, nodeObject } from './models/nodes.js';
import { Scheduler } from './models/scheduler.js';
import type { ModelError } from './models/work-queue.js';
import type {
  AutoscalingRunnerSet,
  EphemeralRunner,
  KubeObject,
  Node,
  Pod,
  PodSpec,
} from './types.js';

export interface SimClusterOptions {
  /** Cluster name (kubeconfig, exporter `clusterName`). Default `sim`. */
  name?: string;
  arcVersion?: ArcVersion;
  /**
   * Overrides of the version's ARC behaviour. Real 0.9.3/0.13.1 have the ERS patch-ID gate and
   * 0.13.1 releases the ER finalizer before its pod is gone; both are off on '0.9'/'0.13' by
   * default for now (on for '0.15').
   */
  arc?: ArcOverrides;
  /** Seed for every random choice (names, uids, drops). Default 1. */
  seed?: number | string;
  /** Share a clock with other twins (sim/github). */
  clock?: SimClock;
  /** The GitHub side; default an InMemoryActionsService on the same clock. */
  actionsService?: ActionsService;
  timings?: Partial<Timings>;
  region?: string;
  account?: string;
  /**
   * The event exporter: `routing` is its config's route, age limit and receivers (scenarios load
   * the shipped infra/kubernetes/event-exporter.yaml with `shippedExporterRouting`); without it,
   * every exported event goes to one EventBridge receiver.
   */
  eventExport?: {
    dropRate?: number;
    latencyMs?: number;
    routing?: ExporterRouting;
    /** Without `routing`: the exporter's maxEventAgeSeconds (default 5, as its config.go). */
    maxEventAgeSeconds?: number;
  };
  karpenter?: {
    provisioning?: boolean;
    nodePool?: string;
    instanceType?: string;
    capacityType?: 'spot' | 'on-demand';
    zone?: string;
  };
  /** kubelet `shutdownGracePeriod` (ms) when the OS shuts down; 0 (default) = no graceful shutdown. */
  shutdownGracePeriodMs?: number;
  /** Actors given bearer tokens. Default runner-medic, user, admin. */
  actors?: string[];
  /**
   * Enforce RBAC on HTTP requests (default false for now). Tokens authenticate to a user named
   * after the actor, in `system:authenticated` plus its groups (`admin`: `system:masters`,
   * `runner-medic`: `runner-medic`). Load the grants with `applyManifestFile`.
   */
  rbac?: boolean;
  /** Extra groups per actor (see `DEFAULT_ACTOR_GROUPS`). */
  groups?: Record<string, string[]>;
  /**
   * Runner deprecation: a runner whose image tag is a version below this (e.g. `2.329.0`) exits 0
   * at start without taking a job, and ARC re-creates it (its pod cycles). Default: none.
   */
  minimumRunnerVersion?: string;
  /** Watch history length before 410 Gone. */
  historyLimit?: number;
  /** Real ms between watch bookmarks. */
  bookmarkIntervalMs?: number;
  /** Real ms a second of a watch's `timeoutSeconds` lasts (default 1000; see HttpServerOptions). */
  watchSecondMs?: number;
}

export interface AddNodeOptions {
  name?: string;
  zone?: string;
  instanceType?: string;
  capacityType?: 'spot' | 'on-demand';
  /** Managed by Karpenter (default true): `karpenter.sh/nodepool` label, Karpenter deletes it. */
  karpenter?: boolean;
  maxPods?: number;
  labels?: Record<string, string>;
  instanceId?: string;
}

export interface AddScaleSetOptions {
  name: string;
  namespace: string;
  minRunners?: number;
  maxRunners?: number;
  githubConfigUrl?: string;
  runnerGroup?: string;
  /** Pod template annotations (e.g. `karpenter.sh/do-not-disrupt`). */
  podAnnotations?: Record<string, string>;
  podSpec?: PodSpec;
  /** Pod template `terminationGracePeriodSeconds` (Kubernetes default 30). */
  terminationGracePeriodSeconds?: number;
  /**
   * What the runner does with SIGTERM (default: what the pod spec says; the runner's own
   * handling unless its command is `graceful-stop.sh`). `graceful-stop` also puts the entrypoint
   * into the pod template, as `infra/kubernetes/runner/values-karpenter.yaml` does.
   */
  onSigterm?: SigtermBehaviour;
  /** graceful-stop: RUNNER_GRACEFUL_STOP_TIMEOUT in seconds (the script's default is 15). */
  gracefulStopTimeoutSeconds?: number;
  /** Runner image tag (`ghcr.io/actions/actions-runner:<version>`); default `latest`. */
  runnerVersion?: string;
  /** Pod template nodeSelector (e.g. `{'kubernetes.io/hostname': 'node-a'}` pins runners). */
  nodeSelector?: Record<string, string>;
}

export class SimCluster {
  readonly name: string;
  readonly clock: SimClock;
  readonly rng: Rng;
  readonly apiServer: ApiServer;
  readonly api: KubeApi;
  readonly audit: AuditLog;
  readonly bus = new EventBus();
  readonly service: ActionsService;
  readonly timings: Timings;
  readonly arc: Arc;
  readonly kubelets: Kubelets;
  readonly scheduler: Scheduler;
  readonly nodeLifecycle: NodeLifecycle;
  readonly ec2: Ec2;
  readonly karpenter: Karpenter;
  readonly exporter: EventExporter;
  readonly faults: Faults;
  readonly logs: LogEntry[] = [];
  /** Errors the models hit (API conflicts they retried, bugs). */
  readonly modelErrors: ModelError[] = [];
  readonly region: string;
  readonly account: string;
  private readonly options: SimClusterOptions;
  private readonly nodeRng: Rng;

  constructor(options: SimClusterOptions = {}) {
    this.options = options;
    this.name = options.name ?? 'sim';
    this.clock = options.clock ?? new SimClock();
    this.rng = new Rng(options.seed ?? 1);
    this.region = options.region ?? 'eu-west-1';
    this.account = options.account ?? '123456789012';
    this.timings = { ...DEFAULT_TIMINGS, ...(options.timings ?? {}) };
    const arcVersion = options.arcVersion ?? '0.13';
    this.apiServer = new ApiServer({
      clock: this.clock,
      rng: this.rng.fork('api-server'),
      clusterName: this.name,
      schemaFlavour: arcVersion,
      actors: options.actors,
      historyLimit: options.historyLimit,
      bookmarkIntervalMs: options.bookmarkIntervalMs,
      watchSecondMs: options.watchSecondMs,
      rbac: options.rbac,
      groups: options.groups,
    });
    this.api = this.apiServer.api;
    this.audit = this.apiServer.audit;
    this.service = options.actionsService ?? new InMemoryActionsService(this.clock);
    this.nodeRng = this.rng.fork('nodes');
    const ctx: ModelContext = {
      api: this.api,
      clock: this.clock,
      rng: this.rng.fork('models'),
      timings: this.timings,
      events: new EventRecorder(this.api, this.clock, this.rng.fork('events')),
      errors: this.modelErrors,
      log: (component, message, fields) =>
        this.logs.push({ at: this.clock.now(), component, message, ...(fields ? { fields } : {}) }),
    };
    this.api.create('kube-apiserver', 'namespaces', undefined, { metadata: { name: 'default' } });
    this.api.create('kube-apiserver', 'namespaces', undefined, {
      metadata: { name: 'kube-system' },
    });

    this.arc = new Arc(ctx, this.service, arcVersion, options.arc);
    this.nodeLifecycle = new NodeLifecycle(ctx, (n) => this.kubelets.isUp(n));
    this.kubelets = new Kubelets(ctx, this.service, {
      jobStarted: (ns, scaleSet, runner, job) => this.arc.jobStarted(ns, scaleSet, runner, job),
      nodeDown: (node) => this.nodeLifecycle.kubeletStopped(node),
    });
    this.kubelets.minimumRunnerVersion = options.minimumRunnerVersion;
    this.scheduler = new Scheduler(ctx, (n) => this.kubelets.isUp(n));
    this.ec2 = new Ec2(ctx, this.bus, { region: this.region, account: this.account });
    this.karpenter = new Karpenter(ctx, {
      terminateInstance: (node) => {
        const i = this.ec2.byNode(node);
        if (i) this.ec2.terminate(i.id);
      },
      launchNode: () => void this.addNode({}),
    });
    this.karpenter.provisioning = options.karpenter?.provisioning ?? false;
    this.scheduler.onUnschedulable = () => this.karpenter.unschedulable();
    this.ec2.hooks = {
      shuttingDown: (instance) => {
        if (!instance.nodeName) return;
        const grace = options.shutdownGracePeriodMs ?? 0;
        if (grace > 0 && this.kubelets.isUp(instance.nodeName))
          this.kubelets.gracefulShutdown(instance.nodeName, grace);
        else this.kubelets.nodeDown(instance.nodeName);
      },
      terminated: (instance) => {
        const node = instance.nodeName
          ? this.api.tryGet<Node>('nodes', undefined, instance.nodeName)
          : undefined;
        if (!node) return;
        if (node.metadata.labels?.['karpenter.sh/nodepool']) this.karpenter.instanceGone(instance);
        else {
          this.clock.after(
            this.timings.nodeDeleteAfterInstanceGoneMs,
            `cloud-node-lifecycle ${instance.nodeName}`,
            () => {
              if (this.api.tryGet('nodes', undefined, instance.nodeName as string))
                this.api.delete(
                  'cloud-node-lifecycle-controller',
                  'nodes',
                  undefined,
                  instance.nodeName as string,
                );
            },
          );
        }
      },
    };
    this.exporter = new EventExporter(this.api, this.clock, this.rng.fork('exporter'), this.bus, {
      clusterName: this.name,
      region: this.region,
      account: this.account,
      dropRate: options.eventExport?.dropRate,
      latencyMs: options.eventExport?.latencyMs,
      ...(options.eventExport?.routing ? { routing: options.eventExport.routing } : {}),
      ...(options.eventExport?.maxEventAgeSeconds !== undefined
        ? { maxEventAgeSeconds: options.eventExport.maxEventAgeSeconds }
        : {}),
    });
    this.faults = new Faults(this);
  }

  /** The GitHub side as the in-memory service, when that is what the cluster uses. */
  get actions(): InMemoryActionsService {
    if (!(this.service instanceof InMemoryActionsService))
      throw new Error('this cluster uses an external ActionsService');
    return this.service;
  }

  get arcVersion(): ArcVersion {
    return this.arc.behaviour.version;
  }

  async start(): Promise<this> {
    await this.apiServer.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.apiServer.stop();
    this.arc.stop();
    this.kubelets.stop();
    this.scheduler.stop();
    this.nodeLifecycle.stop();
    this.exporter.stop();
  }

  /** HTTPS URL of the API server (after start()). */
  get url(): string {
    return this.apiServer.url;
  }

  kubeconfig(actor = 'runner-medic', namespace?: string): string {
    return this.apiServer.kubeconfig(actor, namespace);
  }

  /** Moves simulated time forward, running every model on the way. */
  advance(ms: number): Promise<void> {
    return this.clock.advance(ms);
  }

  /** Advances in steps until `done()` holds; throws after `maxMs`. Returns the time taken. */
  async runUntil(
    done: () => boolean,
    options: { maxMs?: number; stepMs?: number } = {},
  ): Promise<number> {
    const start = this.clock.now();
    const max = options.maxMs ?? 10 * 60_000;
    const step = options.stepMs ?? 500;
    while (!done()) {
      if (this.clock.now() - start >= max)
        throw new Error(`condition not reached within ${max} ms of simulated time`);
      await this.clock.advance(step);
    }
    return this.clock.now() - start;
  }

  /**
   * `kubectl apply -f` of a multi-document manifest (RBAC, namespaces, ...): each object created
   * or replaced. With `namespaces`, namespaced documents are instantiated in each of them.
   */
  applyManifest(text: string, options: LoadManifestOptions = {}): KubeObject[] {
    return applyManifest(this.api, text, options);
  }

  /** `applyManifest` of a file, e.g. `infra/kubernetes/rbac.yaml`. */
  applyManifestFile(path: string, options: LoadManifestOptions = {}): KubeObject[] {
    return applyManifestFile(this.api, path, options);
  }

  createNamespace(name: string): void {
    if (!this.api.tryGet('namespaces', undefined, name))
      this.api.create('scenario', 'namespaces', undefined, { metadata: { name } });
  }

  addNode(options: AddNodeOptions = {}): Node {
    const k = this.options.karpenter ?? {};
    const zone = options.zone ?? k.zone ?? `${this.region}a`;
    const instance = this.ec2.launch({
      zone,
      instanceType: options.instanceType ?? k.instanceType ?? 'm6i.2xlarge',
      capacityType: options.capacityType ?? k.capacityType ?? 'spot',
      id: options.instanceId,
    });
    const generated = nodeName(this.nodeRng, this.region);
    const name = options.name ?? generated.name;
    instance.nodeName = name;
    const node = this.api.create(
      'kubelet',
      'nodes',
      undefined,
      nodeObject(
        {
          name,
          providerID: this.ec2.providerId(instance),
          zone,
          region: this.region,
          instanceType: instance.instanceType,
          capacityType: instance.capacityType,
          nodePool: options.karpenter === false ? undefined : (k.nodePool ?? 'default'),
          maxPods: options.maxPods ?? 110,
          labels: options.labels,
          internalIP: generated.ip,
        },
        this.clock.now(),
      ),
      { keepStatus: true },
    ) as Node;
    this.kubelets.register(name);
    return node;
  }

  addScaleSet(options: AddScaleSetOptions): AutoscalingRunnerSet {
    this.createNamespace(options.namespace);
    const template = defaultRunnerTemplate();
    if (options.podSpec) template.spec = options.podSpec;
    if (options.podAnnotations) template.metadata = { annotations: { ...options.podAnnotations } };
    const runner = template.spec.containers.find((c) => c.name === 'runner');
    if (options.terminationGracePeriodSeconds !== undefined)
      template.spec.terminationGracePeriodSeconds = options.terminationGracePeriodSeconds;
    if (options.nodeSelector) template.spec.nodeSelector = { ...options.nodeSelector };
    if (runner && options.runnerVersion)
      runner.image = `ghcr.io/actions/actions-runner:${options.runnerVersion}`;
    if (runner && options.onSigterm === 'graceful-stop' && !options.podSpec) {
      runner.command = ['/home/runner/graceful-stop/graceful-stop.sh'];
      runner.env = [
        ...(runner.env ?? []),
        { name: 'RUNNER_ENTRYPOINT', value: '/home/runner/run.sh' },
        ...(options.gracefulStopTimeoutSeconds !== undefined
          ? [
              {
                name: 'RUNNER_GRACEFUL_STOP_TIMEOUT',
                value: String(options.gracefulStopTimeoutSeconds),
              },
            ]
          : []),
      ];
    }
    if (options.onSigterm || options.gracefulStopTimeoutSeconds !== undefined)
      this.kubelets.setRunnerSettings(options.namespace, options.name, {
        ...(options.onSigterm ? { onSigterm: options.onSigterm } : {}),
        ...(options.gracefulStopTimeoutSeconds !== undefined
          ? { stopTimeoutSeconds: options.gracefulStopTimeoutSeconds }
          : {}),
      });
    const ars = {
      apiVersion: ARC_API_VERSION,
      kind: 'AutoscalingRunnerSet',
      metadata: {
        name: options.name,
        namespace: options.namespace,
        labels: {
          'app.kubernetes.io/name': options.name,
          'app.kubernetes.io/instance': options.name,
          'app.kubernetes.io/component': 'autoscaling-runner-set',
          'app.kubernetes.io/part-of': 'gha-rs',
          'actions.github.com/scale-set-name': options.name,
          'actions.github.com/scale-set-namespace': options.namespace,
        },
      },
      spec: {
        githubConfigUrl: options.githubConfigUrl ?? 'https://github.com/acme',
        githubConfigSecret: `${options.name}-gha-rs-github-secret`,
        runnerGroup: options.runnerGroup ?? 'Default',
        runnerScaleSetName: options.name,
        ...(options.minRunners !== undefined ? { minRunners: options.minRunners } : {}),
        ...(options.maxRunners !== undefined ? { maxRunners: options.maxRunners } : {}),
        template,
      },
    };
    return this.api.create(
      'scenario',
      'autoscalingrunnersets',
      options.namespace,
      ars,
    ) as AutoscalingRunnerSet;
  }

  pods(namespace?: string): Pod[] {
    return this.api.all<Pod>('pods', namespace);
  }

  pod(namespace: string, name: string): Pod | undefined {
    return this.api.tryGet<Pod>('pods', namespace, name);
  }

  ephemeralRunners(namespace?: string): EphemeralRunner[] {
    return this.api.all<EphemeralRunner>('ephemeralrunners', namespace);
  }

  ephemeralRunner(namespace: string, name: string): EphemeralRunner | undefined {
    return this.api.tryGet<EphemeralRunner>('ephemeralrunners', namespace, name);
  }

  nodes(): Node[] {
    return this.api.all<Node>('nodes');
  }
}
