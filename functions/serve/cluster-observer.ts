/**
 * The cluster, observed directly: list-then-watch informers (client-node's ListWatch, the cache
 * behind `makeInformer`) on the runner namespaces' Events, runner pods and EphemeralRunners, the
 * node events namespace's Events, and the nodes. Their changes become the observations exported
 * events give the Lambda deployment:
 * - an Event becomes what kubernetes-event-exporter would have put on the bus (its involved
 *   object enriched with labels, annotations and owner references from the informers' own cache,
 *   `deleted` when gone, as the exporter's lookup does), parsed by the domain's own
 *   parseKubeEventObject, and passed on only when the domain's classifyEvent finds it a loss, a
 *   node signal or a runner warning;
 * - a runner pod, EphemeralRunner or node whose own state the domain classifies as a loss or a
 *   node signal (classifyPod, classifyKilledRunner, classifyEphemeralRunner, classifyNode) is
 *   passed on as those facts and the subject to decide.
 * A watch that ends is resumed from its resourceVersion; a 410 Gone relists, and the relist's
 * differences (deletions included) arrive as changes; any other failure (a stream cut, a refused
 * connection, a 5xx) is retried on serve's timers with backoff (1 s doubling to 30 s, started
 * again after 2 quiet minutes, as client-go's reflector backs off: tools/cache/reflector.go,
 * NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)) and reported until a list or a watch
 * is answered again. An informer waiting for its retry holds its cache: the retry resumes from
 * its resourceVersion, or relists when that is gone.
 */
import { ListWatch } from '@kubernetes/client-node/dist/cache.js';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { KubernetesObject } from '@kubernetes/client-node/dist/types.js';
import { Watch } from '@kubernetes/client-node/dist/watch.js';
import { classifyEvent } from '../domain/classify/classify.js';
import { classifyEphemeralRunner, classifyNode, classifyPod } from '../domain/classify/classify.js';
import { classifyKilledRunner } from '../domain/classify/classify-pod.js';
import type { KubeEvent } from '../domain/model/cluster-facts.js';
import type { Loss, NodeSignal } from '../domain/model/loss.js';
import { parseKubeEventObject } from '../domain/parse/parse-kube-event.js';
import { parseEphemeralRunner, parseNode, parsePod } from '../domain/parse/parse-kube-object.js';
import type { Subject } from '../engine/subjects.js';
import type { Clock } from '../ports/clock.js';
import type { KubeRequest } from './kube-http.js';
import type { Timers } from './timers.js';

/** ARC's label on every runner pod (the exporter's route matches it too). */
const RUNNER_POD_LABEL = 'actions-ephemeral-runner';
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** A failure this long after the previous one starts the backoff again from its base. */
const BACKOFF_RESET_MS = 120_000;

export type Observation =
  | { kind: 'events'; events: KubeEvent[] }
  | { kind: 'facts'; losses: Loss[]; signals: NodeSignal[]; subjects: Subject[] };

interface RawObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
    deletionTimestamp?: string;
  };
  [key: string]: unknown;
}

export interface InformerStatus {
  path: string;
  synced: boolean;
  /** The last failure, while it lasts. */
  error: string | null;
  resourceVersion: string;
}

export interface ClusterObserverOptions {
  kubeconfig: KubeConfig;
  request: KubeRequest;
  cluster: string;
  runnerNamespaces: string[];
  nodeEventsNamespace: string;
  clock: Clock;
  /** Where the retries after a failure (and, unless reconnectDelay is given, reconnects) wait. */
  timers: Timers;
  onObservation: (observation: Observation) => void;
  onError?: (path: string, error: string) => void;
  /**
   * The informers' wait before they reconnect a watch that ended cleanly without an event
   * (client-node waits 1 s doubling). @default that wait on `timers`
   */
  reconnectDelay?: (ms: number) => Promise<void>;
}

type Kind = 'events' | 'pods' | 'ephemeralrunners' | 'nodes';

interface Informer {
  kind: Kind;
  path: string;
  watch: ListWatch<KubernetesObject>;
  synced: boolean;
  error: string | null;
  failures: number;
  lastFailureAt: number | null;
  /** Cancels the retry waiting after a failure. */
  retry: (() => void) | null;
}

export class ClusterObserver {
  private readonly informers: Informer[] = [];
  /** Runner pods recently deleted: an Event about one still finds its labels (deleted: true). */
  private readonly gone = new Map<string, RawObject>();
  private readonly handledEvents = new Set<string>();
  private stopped = false;

  constructor(private readonly options: ClusterObserverOptions) {
    const { runnerNamespaces, nodeEventsNamespace } = options;
    const eventNamespaces = [...new Set([...runnerNamespaces, nodeEventsNamespace])];
    for (const ns of runnerNamespaces) {
      this.add('pods', `/api/v1/namespaces/${ns}/pods`, `${RUNNER_POD_LABEL}`);
      this.add(
        'ephemeralrunners',
        `/apis/actions.github.com/v1alpha1/namespaces/${ns}/ephemeralrunners`,
      );
    }
    this.add('nodes', '/api/v1/nodes');
    // Events last: their involved objects are looked up in the caches above.
    for (const ns of eventNamespaces) this.add('events', `/api/v1/namespaces/${ns}/events`);
  }

  async start(): Promise<void> {
    this.stopped = false;
    for (const informer of this.informers) await this.startInformer(informer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const informer of this.informers) {
      informer.retry?.();
      informer.retry = null;
      await informer.watch.stop();
    }
  }

  /** Every informer has listed once and none is failing now. */
  synced(): boolean {
    return this.informers.every((i) => i.synced && i.error === null);
  }

  status(): InformerStatus[] {
    return this.informers.map((i) => ({
      path: i.path,
      synced: i.synced,
      error: i.error,
      resourceVersion: i.watch.latestResourceVersion(),
    }));
  }

  /**
   * Whether every cache holds exactly what the API server lists now (names and
   * resourceVersions): no change is still on its way. The sandbox waits on this between steps.
   * An informer waiting for its retry is left out: it catches up when its time comes.
   */
  async caughtUp(): Promise<boolean> {
    for (const informer of this.informers) {
      if (informer.retry) continue;
      const listed = (await this.list(informer)).items;
      const cached = informer.watch.list() as RawObject[];
      if (listed.length !== cached.length) return false;
      const versions = new Map(cached.map((o) => [keyOf(o), o.metadata?.resourceVersion]));
      for (const o of listed)
        if (versions.get(keyOf(o)) !== o.metadata?.resourceVersion) return false;
    }
    return true;
  }

  private add(kind: Kind, path: string, labelSelector?: string): void {
    const informer: Informer = {
      kind,
      path,
      synced: false,
      error: null,
      failures: 0,
      lastFailureAt: null,
      retry: null,
      watch: undefined as unknown as ListWatch<KubernetesObject>,
    };
    const listFn = async () => {
      const list = await this.list(informer, labelSelector);
      // The cache takes the items right after this resolves; synced from the next turn on.
      setImmediate(() => {
        informer.synced = true;
        informer.error = null;
      });
      return list;
    };
    const { timers, reconnectDelay } = this.options;
    const delayFn =
      reconnectDelay ??
      ((ms: number) =>
        new Promise<void>((resolve) => {
          timers.after(ms, `watch reconnect ${path}`, resolve);
        }));
    informer.watch = new ListWatch<KubernetesObject>(
      path,
      new AnsweredWatch(
        this.options.kubeconfig,
        () => {
          // Answered: the API server is reached again (a failure says so again at once).
          if (informer.synced) informer.error = null;
        },
        () => this.stopped,
      ),
      listFn as never,
      false,
      labelSelector,
      undefined,
      { delayFn },
    );
    informer.watch.on('add', (o) => this.changed(kind, 'add', o as RawObject));
    informer.watch.on('update', (o) => this.changed(kind, 'update', o as RawObject));
    informer.watch.on('delete', (o) => this.changed(kind, 'delete', o as RawObject));
    informer.watch.on('error', (error: unknown) => this.failed(informer, error));
    this.informers.push(informer);
  }

  private async list(
    informer: Informer,
    labelSelector = informer.kind === 'pods' ? RUNNER_POD_LABEL : undefined,
  ): Promise<{ items: RawObject[]; metadata: { resourceVersion: string } }> {
    const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
    const list = await this.options.request('GET', `${informer.path}${query}`);
    return list as unknown as { items: RawObject[]; metadata: { resourceVersion: string } };
  }

  private async startInformer(informer: Informer): Promise<void> {
    try {
      await informer.watch.start();
    } catch (error) {
      this.failed(informer, error);
    }
  }

  /**
   * ListWatch stops on an error other than 410: start it again after a backoff, never at once
   * (an API server that refuses every connection is asked at 1, 2, 4, … 30 s intervals).
   */
  private failed(informer: Informer, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const now = this.options.clock.now();
    informer.error = message;
    if (informer.lastFailureAt !== null && now - informer.lastFailureAt > BACKOFF_RESET_MS)
      informer.failures = 0;
    informer.failures++;
    informer.lastFailureAt = now;
    this.options.onError?.(informer.path, message);
    if (this.stopped || informer.retry) return;
    const wait = Math.min(BACKOFF_BASE_MS * 2 ** (informer.failures - 1), BACKOFF_MAX_MS);
    informer.retry = this.options.timers.after(wait, `informer retry ${informer.path}`, () => {
      informer.retry = null;
      if (!this.stopped) return this.startInformer(informer);
    });
  }

  private changed(kind: Kind, verb: 'add' | 'update' | 'delete', object: RawObject): void {
    if (this.stopped) return;
    try {
      if (kind === 'events') {
        if (verb !== 'delete') this.event(object);
        return;
      }
      if (kind === 'pods' && verb === 'delete') this.remember(object);
      const observation = this.objectFacts(kind, object, verb);
      if (observation) this.options.onObservation(observation);
    } catch (error) {
      this.options.onError?.(kind, (error as Error).message);
    }
  }

  private event(raw: RawObject): void {
    const id = `${raw.metadata?.uid ?? ''}/${String(raw['count'] ?? '')}/${String(raw['lastTimestamp'] ?? raw['eventTime'] ?? '')}`;
    if (this.handledEvents.has(id)) return;
    this.handledEvents.add(id);
    if (this.handledEvents.size > 10_000) this.handledEvents.clear();
    const parsed = parseKubeEventObject(this.enhanced(raw), {
      defaultCluster: this.options.cluster,
      recordedAt: this.options.clock.now(),
    });
    if (!parsed.ok) return;
    if (classifyEvent(parsed.value).kind === 'ignored') return;
    this.options.onObservation({ kind: 'events', events: [parsed.value] });
  }

  /** The exporter's enhancement, from the caches (objects.go looks the object up by name). */
  private enhanced(raw: RawObject): Record<string, unknown> {
    const io = (raw['involvedObject'] ?? {}) as Record<string, unknown>;
    const name = typeof io['name'] === 'string' ? io['name'] : '';
    const namespace = typeof io['namespace'] === 'string' ? io['namespace'] : '';
    let found: RawObject | undefined;
    let deleted = false;
    if (io['kind'] === 'Pod') {
      found = this.cached('pods', name, namespace);
      if (!found) {
        found = this.gone.get(`${namespace}/${name}`);
        deleted = true;
      }
    } else if (io['kind'] === 'Node') found = this.cached('nodes', name, undefined);
    const meta = found?.metadata;
    return {
      ...raw,
      involvedObject: {
        ...io,
        ...(meta?.labels ? { labels: meta.labels } : {}),
        ...(meta?.annotations ? { annotations: meta.annotations } : {}),
        ...(meta?.ownerReferences ? { ownerReferences: meta.ownerReferences } : {}),
        deleted: deleted || !found || Boolean(meta?.deletionTimestamp),
      },
    };
  }

  private cached(kind: Kind, name: string, namespace: string | undefined): RawObject | undefined {
    for (const i of this.informers)
      if (i.kind === kind) {
        const o = i.watch.get(name, namespace);
        if (o) return o as RawObject;
      }
    return undefined;
  }

  private remember(pod: RawObject): void {
    this.gone.set(keyOf(pod), pod);
    if (this.gone.size > 1000) this.gone.delete(this.gone.keys().next().value as string);
  }

  private objectFacts(kind: Kind, raw: RawObject, verb: string): Observation | null {
    const { cluster, clock } = this.options;
    if (kind === 'pods') {
      const pod = parsePod(raw, cluster);
      if (!pod.ok) return null;
      const loss = classifyPod(pod.value) ?? classifyKilledRunner(pod.value);
      return loss ? factsOf([loss], []) : null;
    }
    if (kind === 'ephemeralrunners') {
      if (verb === 'delete') return null;
      const er = parseEphemeralRunner(raw, cluster);
      if (!er.ok) return null;
      const loss = classifyEphemeralRunner(er.value);
      return loss ? factsOf([loss], []) : null;
    }
    const node = parseNode(raw, cluster);
    if (!node.ok) return null;
    const signals = classifyNode(
      verb === 'delete' && node.value.deletionTimestamp === null
        ? { ...node.value, deletionTimestamp: clock.now() }
        : node.value,
      clock.now(),
    );
    return signals.length > 0 ? factsOf([], signals) : null;
  }
}

/**
 * client-node's Watch, telling when the API server answered a watch with its stream (the request
 * resolved and nothing ended it yet): from then on the informer is reached again. Once the
 * observer stopped it opens no watch: ListWatch opens one after its reconnect wait even when it
 * was stopped during the wait.
 */
class AnsweredWatch extends Watch {
  constructor(
    kubeconfig: KubeConfig,
    private readonly onAnswered: () => void,
    private readonly stopped: () => boolean,
  ) {
    super(kubeconfig);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    if (this.stopped()) {
      done(null);
      return new AbortController();
    }
    let ended = false;
    const controller = await super.watch(path, queryParams, callback, (err: unknown) => {
      ended = true;
      done(err);
    });
    if (!ended) this.onAnswered();
    return controller;
  }
}

const keyOf = (o: RawObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function factsOf(losses: Loss[], signals: NodeSignal[]): Observation {
  const subjects: Subject[] = [
    ...losses.map((l): Subject => ({
      kind: 'runner',
      cluster: l.cluster,
      namespace: l.namespace,
      name: l.runnerName,
    })),
    ...signals
      .filter((s): s is NodeSignal & { cluster: string; nodeName: string } =>
        Boolean(s.cluster && s.nodeName),
      )
      .map((s): Subject => ({ kind: 'node', cluster: s.cluster, nodeName: s.nodeName })),
  ];
  return { kind: 'facts', losses, signals, subjects };
}
