import pLimit from 'p-limit';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from './client-node.js';
import type { EphemeralRunner, Node, Pod } from '../../domain/model/cluster-facts.js';
import { parseEphemeralRunner, parseNode, parsePod } from '../../domain/parse/parse-kube-object.js';
import type { Result } from '../../domain/model/result.js';
import {
  ClusterUnavailableError,
  type ClusterGateway,
  type ClusterMutation,
  type FollowedObjects,
  type FollowedRunners,
  type FollowChanges,
  type RunnerListing,
} from '../../ports/cluster-gateway.js';
import { ChangeFollower, type FollowOutcome, type RawListPage } from './follow-changes.js';
import { KubeObjectParseError, statusCodeOf, toClusterError } from './kube-errors.js';
import { listAll, pageOf, parseEach } from './kube-list.js';
import { jsonPatchOptions, timeoutOptions } from './kube-request-options.js';

export const EPHEMERAL_RUNNERS = {
  group: 'actions.github.com',
  version: 'v1alpha1',
  plural: 'ephemeralrunners',
} as const;

const SCALE_SET_LABEL = 'actions.github.com/scale-set-name';

/** The labels ARC puts on every runner pod of a scale set. */
export const RUNNER_POD_SELECTOR =
  'actions-ephemeral-runner=True,app.kubernetes.io/component=runner';

export interface KubeClusterGatewayOptions {
  /** The cluster name as events carry it. */
  cluster: string;
  kubeConfig: KubeConfig;
  /** Items per list page (default 500). */
  pageSize?: number;
  /** Abort a request after this long (default 10 s). */
  requestTimeoutMs?: number;
  /** Told about every object a parser refused (it is skipped). */
  onUnparseable?: (kind: string, reason: string) => void;
  /** Told when the API answers 401, so a cached credential can be dropped. */
  onUnauthorized?: () => void;
  /** `timeoutSeconds` of the watches of followRunners (default 3: a bookmark after about 1 s). */
  watchSeconds?: number;
}

/** A node name is a DNS subdomain (RFC 1123): it can hold no selector syntax. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * List pages in flight at once to one cluster. A sweep that lists every runner namespace would
 * otherwise send 200 lists together at 100 namespaces: the API server's priority and fairness
 * queues them by the seats a list takes (kubernetes.io/docs/concepts/cluster-administration/flow-control/),
 * and their 10 s timeouts ran out on a busy twin. Watches, served from the watch cache, are not
 * limited: each waits about a second for its bookmark, and all of them wait together.
 */
const LIST_PAGES_AT_ONCE = 8;

/** How many times removeFinalizers re-reads and retries when the object moved under it. */
const FINALIZER_ATTEMPTS = 3;

/** ClusterGateway over @kubernetes/client-node: reads parsed, mutations guarded by uid. */
export class KubeClusterGateway implements ClusterGateway {
  readonly cluster: string;
  /** Objects skipped because the domain parsers refused them, since construction. */
  unparseable = 0;
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly pageSize: number;
  private readonly timeoutMs: number;
  private readonly listSlots = pLimit(LIST_PAGES_AT_ONCE);

  constructor(private readonly options: KubeClusterGatewayOptions) {
    this.cluster = options.cluster;
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.pageSize = options.pageSize ?? 500;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  async listRunners(namespace?: string): Promise<RunnerListing> {
    const page = { limit: this.pageSize };
    const [ers, pods] = await Promise.all([
      this.call('list ephemeralrunners', () =>
        listAll(async (next) =>
          pageOf(
            namespace === undefined
              ? await this.custom.listClusterCustomObject(
                  { ...EPHEMERAL_RUNNERS, ...page, _continue: next },
                  this.opts(),
                )
              : await this.custom.listNamespacedCustomObject(
                  { ...EPHEMERAL_RUNNERS, namespace, ...page, _continue: next },
                  this.opts(),
                ),
          ),
        ),
      ),
      this.call('list runner pods', () =>
        listAll(async (next) => {
          const query = { labelSelector: RUNNER_POD_SELECTOR, ...page, _continue: next };
          const list =
            namespace === undefined
              ? await this.core.listPodForAllNamespaces(query, this.opts())
              : await this.core.listNamespacedPod({ namespace, ...query }, this.opts());
          return pageOf({ items: list.items, metadata: list.metadata });
        }),
      ),
    ]);
    return {
      ephemeralRunners: this.parseAll('EphemeralRunner', ers, parseEphemeralRunner),
      pods: this.parseAll('Pod', pods, parsePod),
    };
  }

  async listRunnersPage(namespace: string, next: string | null, limit: number) {
    // Pods follow their EphemeralRunners' page: the ERs of this page, then their pods by name
    // through the runner label selector of the namespace (one page of the same size).
    const page = pageOf(
      await this.call('list ephemeralrunners', () =>
        this.custom.listNamespacedCustomObject(
          { ...EPHEMERAL_RUNNERS, namespace, limit, ...(next ? { _continue: next } : {}) },
          this.opts(),
        ),
      ),
    );
    const ephemeralRunners = this.parseAll('EphemeralRunner', page.items, parseEphemeralRunner);
    const names = new Set(ephemeralRunners.map((er) => er.metadata.name));
    const pods =
      next === null && page.next === undefined
        ? await this.listRunnerPods(namespace)
        : (await Promise.all([...names].map((name) => this.getPod(namespace, name)))).filter(
            (p): p is Pod => p !== null,
          );
    return { ephemeralRunners, pods, next: page.next ?? null };
  }

  async followRunners(namespace: string | null, state: FollowedRunners): Promise<FollowChanges> {
    const where = namespace === null ? '' : `/namespaces/${namespace}`;
    const { group, version, plural } = EPHEMERAL_RUNNERS;
    const limit = this.pageSize;
    const ers = new ChangeFollower<EphemeralRunner>(
      {
        path: `/apis/${group}/${version}${where}/${plural}`,
        listPage: async (next) =>
          listPageOf(
            namespace === null
              ? await this.custom.listClusterCustomObject(
                  { ...EPHEMERAL_RUNNERS, limit, _continue: next },
                  this.opts(),
                )
              : await this.custom.listNamespacedCustomObject(
                  { ...EPHEMERAL_RUNNERS, namespace, limit, _continue: next },
                  this.opts(),
                ),
          ),
        parse: (raw) => this.parseFollowed('EphemeralRunner', raw, parseEphemeralRunner),
      },
      this.followOptions(),
    );
    const pods = new ChangeFollower<Pod>(
      {
        path: `/api/v1${where}/pods`,
        labelSelector: RUNNER_POD_SELECTOR,
        listPage: async (next) => {
          const query = { labelSelector: RUNNER_POD_SELECTOR, limit, _continue: next };
          const list =
            namespace === null
              ? await this.core.listPodForAllNamespaces(query, this.opts())
              : await this.core.listNamespacedPod({ namespace, ...query }, this.opts());
          return listPageOf({ items: list.items, metadata: list.metadata });
        },
        parse: (raw) => this.parseFollowed('Pod', raw, parsePod),
      },
      this.followOptions(),
    );
    const [a, b] = await Promise.all([
      this.call('follow ephemeralrunners', () => ers.follow(state.ephemeralRunners)),
      this.call('follow runner pods', () => pods.follow(state.pods)),
    ]);
    const watched = (o: FollowOutcome) => (o.kind === 'watched' ? [...o.changed] : []);
    return {
      listed: a.kind === 'listed' || b.kind === 'listed',
      changed: new Set([...watched(a), ...watched(b)]),
    };
  }

  async followNodes(state: FollowedObjects<Node>): Promise<FollowChanges> {
    const nodes = new ChangeFollower<Node>(
      {
        path: '/api/v1/nodes',
        listPage: async (next) =>
          listPageOf(
            await this.core.listNode({ limit: this.pageSize, _continue: next }, this.opts()),
          ),
        parse: (raw) => this.parseFollowed('Node', raw, parseNode),
      },
      this.followOptions(),
    );
    const outcome = await this.call('follow nodes', () => nodes.follow(state));
    return {
      listed: outcome.kind === 'listed',
      changed: outcome.kind === 'watched' ? new Set(outcome.changed) : new Set(),
    };
  }

  private followOptions() {
    return {
      kubeConfig: this.options.kubeConfig,
      listSlots: this.listSlots,
      ...(this.options.watchSeconds ? { watchSeconds: this.options.watchSeconds } : {}),
    };
  }

  private parseFollowed<T>(
    kind: string,
    raw: unknown,
    parse: (raw: unknown, cluster: string) => Result<T>,
  ): T | null {
    const r = parse(raw, this.cluster);
    if (r.ok) return r.value;
    this.skip(kind, r.reason);
    return null;
  }

  async findRunnerOfScaleSet(
    scaleSet: string,
    namespaces?: readonly string[],
  ): Promise<EphemeralRunner | null> {
    const query = { labelSelector: `${SCALE_SET_LABEL}=${scaleSet}`, limit: 1 };
    for (const namespace of namespaces ?? [undefined]) {
      const page = pageOf(
        await this.call(`find a runner of scale set ${scaleSet}`, () =>
          namespace === undefined
            ? this.custom.listClusterCustomObject({ ...EPHEMERAL_RUNNERS, ...query }, this.opts())
            : this.custom.listNamespacedCustomObject(
                { ...EPHEMERAL_RUNNERS, namespace, ...query },
                this.opts(),
              ),
        ),
      );
      const found = this.parseAll('EphemeralRunner', page.items, parseEphemeralRunner)[0];
      if (found) return found;
    }
    return null;
  }

  /** The runner pods of one namespace (ARC's runner labels), all pages. */
  private async listRunnerPods(namespace: string): Promise<Pod[]> {
    const pods = await this.call('list runner pods', () =>
      listAll(async (next) => {
        const list = await this.core.listNamespacedPod(
          { namespace, labelSelector: RUNNER_POD_SELECTOR, limit: this.pageSize, _continue: next },
          this.opts(),
        );
        return pageOf({ items: list.items, metadata: list.metadata });
      }),
    );
    return this.parseAll('Pod', pods, parsePod);
  }

  /**
   * One node, read as a list with a name field selector, so that RBAC needs only `list` on
   * nodes. A name no node can have (not a DNS subdomain, so it could widen the selector) is
   * answered without a call; of the items, only one of exactly that name counts.
   */
  async getNode(name: string): Promise<Node | null> {
    if (name.length > 253 || !NODE_NAME.test(name)) return null;
    const list = await this.call(`list node ${name}`, () =>
      this.core.listNode({ fieldSelector: `metadata.name=${name}` }, this.opts()),
    );
    const raw = list.items.find((n) => n.metadata?.name === name);
    return raw === undefined ? null : this.parseOne('Node', raw, parseNode);
  }

  async listRunnerPodsOnNode(nodeName: string, namespaces?: readonly string[]): Promise<Pod[]> {
    const query = {
      labelSelector: RUNNER_POD_SELECTOR,
      fieldSelector: `spec.nodeName=${nodeName}`,
      limit: this.pageSize,
    };
    const lists = await this.call(`list runner pods on node ${nodeName}`, () =>
      namespaces === undefined
        ? listAll(async (next) => {
            const list = await this.core.listPodForAllNamespaces(
              { ...query, _continue: next },
              this.opts(),
            );
            return pageOf({ items: list.items, metadata: list.metadata });
          })
        : Promise.all(
            namespaces.map((namespace) =>
              listAll(async (next) => {
                const list = await this.core.listNamespacedPod(
                  { namespace, ...query, _continue: next },
                  this.opts(),
                );
                return pageOf({ items: list.items, metadata: list.metadata });
              }),
            ),
          ).then((all) => all.flat()),
    );
    return this.parseAll('Pod', lists, parsePod);
  }

  async listNodes(): Promise<Node[]> {
    const nodes = await this.call('list nodes', () =>
      listAll(async (next) => {
        const list = await this.core.listNode(
          { limit: this.pageSize, _continue: next },
          this.opts(),
        );
        return pageOf({ items: list.items, metadata: list.metadata });
      }),
    );
    return this.parseAll('Node', nodes, parseNode);
  }

  async getEphemeralRunner(namespace: string, name: string): Promise<EphemeralRunner | null> {
    const raw = await this.read(`get ephemeralrunner ${namespace}/${name}`, () =>
      this.custom.getNamespacedCustomObject({ ...EPHEMERAL_RUNNERS, namespace, name }, this.opts()),
    );
    return raw === null ? null : this.parseOne('EphemeralRunner', raw, parseEphemeralRunner);
  }

  async getPod(namespace: string, name: string): Promise<Pod | null> {
    const raw = await this.read(`get pod ${namespace}/${name}`, () =>
      this.core.readNamespacedPod({ namespace, name }, this.opts()),
    );
    return raw === null ? null : this.parseOne('Pod', raw, parsePod);
  }

  deleteEphemeralRunner(namespace: string, name: string, uid: string): Promise<ClusterMutation> {
    return this.mutate(`delete ephemeralrunner ${namespace}/${name}`, () =>
      this.custom.deleteNamespacedCustomObject(
        { ...EPHEMERAL_RUNNERS, namespace, name, body: { preconditions: { uid } } },
        this.opts(),
      ),
    );
  }

  deletePod(
    namespace: string,
    name: string,
    uid: string,
    force: boolean,
  ): Promise<ClusterMutation> {
    const body = force
      ? { preconditions: { uid }, gracePeriodSeconds: 0 }
      : { preconditions: { uid } };
    return this.mutate(`delete pod ${namespace}/${name}`, () =>
      this.core.deleteNamespacedPod({ namespace, name, body }, this.opts()),
    );
  }

  async removeFinalizers(
    namespace: string,
    name: string,
    uid: string,
    finalizers: readonly string[],
  ): Promise<ClusterMutation> {
    const what = `remove finalizers of ephemeralrunner ${namespace}/${name}`;
    let refused: { had: string[]; error: unknown } | undefined;
    for (let attempt = 1; ; attempt++) {
      const current = await this.getEphemeralRunner(namespace, name);
      if (!current || current.metadata.uid !== uid) return 'gone';
      const had = current.metadata.finalizers;
      // Refused although nothing moved: not a race, so a retry will not help.
      if (refused && sameList(refused.had, had)) throw this.failure(refused.error, what);
      const keep = had.filter((f) => !finalizers.includes(f));
      if (keep.length === had.length) return 'done';
      try {
        await this.custom.patchNamespacedCustomObject(
          { ...EPHEMERAL_RUNNERS, namespace, name, body: finalizerPatch(uid, had, keep) },
          jsonPatchOptions(this.timeoutMs),
        );
        return 'done';
      } catch (e) {
        const code = statusCodeOf(e);
        if (code === 404) return 'gone';
        // 422: a `test` op failed (the object changed since the read); 409: a write conflict.
        if (code !== 422 && code !== 409) throw this.failure(e, what);
        if (attempt >= FINALIZER_ATTEMPTS) {
          throw new ClusterUnavailableError(`${what}: the object kept changing`, { cause: e });
        }
        refused = { had, error: e };
      }
    }
  }

  private opts() {
    return timeoutOptions(this.timeoutMs);
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      throw this.failure(e, what);
    }
  }

  /** A read where 404 means absent. */
  private async read(what: string, run: () => Promise<unknown>): Promise<unknown> {
    try {
      return await run();
    } catch (e) {
      if (statusCodeOf(e) === 404) return null;
      throw this.failure(e, what);
    }
  }

  /** A uid-guarded mutation: 404 (absent) and 409 (precondition: another uid) are `gone`. */
  private async mutate(what: string, run: () => Promise<unknown>): Promise<ClusterMutation> {
    try {
      await run();
      return 'done';
    } catch (e) {
      const code = statusCodeOf(e);
      if (code === 404 || code === 409) return 'gone';
      throw this.failure(e, what);
    }
  }

  private failure(e: unknown, what: string): Error {
    if (statusCodeOf(e) === 401) this.options.onUnauthorized?.();
    return toClusterError(e, this.cluster, what);
  }

  private parseAll<T>(
    kind: string,
    items: unknown[],
    parse: (raw: unknown, cluster: string) => Result<T>,
  ): T[] {
    return parseEach(
      items,
      (raw) => parse(raw, this.cluster),
      (reason) => this.skip(kind, reason),
    );
  }

  /** A single object that does not parse is an error, not an absence: null would read as "gone". */
  private parseOne<T>(
    kind: string,
    raw: unknown,
    parse: (raw: unknown, cluster: string) => Result<T>,
  ): T {
    const r = parse(raw, this.cluster);
    if (r.ok) return r.value;
    this.skip(kind, r.reason);
    throw new KubeObjectParseError(`${kind} from cluster ${this.cluster}: ${r.reason}`);
  }

  private skip(kind: string, reason: string): void {
    this.unparseable++;
    this.options.onUnparseable?.(kind, reason);
  }
}

/** A list body as a page of a followed list: items, continue token, resourceVersion. */
function listPageOf(body: unknown): RawListPage {
  const { items, next } = pageOf(body);
  const meta = (body as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  const rv = meta?.resourceVersion;
  if (typeof rv !== 'string' || rv === '') throw new Error('a list without a resourceVersion');
  return { items, next, resourceVersion: rv };
}

/** JSON patch that applies only to this uid and this exact finalizer list. */
function finalizerPatch(uid: string, had: string[], keep: string[]) {
  return [
    { op: 'test', path: '/metadata/uid', value: uid },
    { op: 'test', path: '/metadata/finalizers', value: had },
    keep.length === 0
      ? { op: 'remove', path: '/metadata/finalizers' }
      : { op: 'replace', path: '/metadata/finalizers', value: keep },
  ];
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
