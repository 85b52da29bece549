/**
 * The API server as a unit: store + semantics + HTTP, with actors and their bearer tokens.
 * SimCluster builds one; tests of the protocol alone can too.
 */
import type { SimClock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import { hexId } from '../ids.js';
import { renderKubeconfig } from '../kubeconfig.js';
import { AuditLog } from './audit.js';
import { KubeHttpServer, LOOPBACK_CA_PEM, type Unreachable } from './http-server.js';
import { KubeApi } from './kube-api.js';
import { bootstrapPolicy, RbacAuthorizer, type UserInfo } from './rbac.js';
import { resourceByKind } from './resources.js';
import { ObjectStore } from './store.js';
import type { SchemaFlavour } from './validation.js';

export interface ApiServerOptions {
  clock: SimClock;
  rng: Rng;
  clusterName: string;
  schemaFlavour: SchemaFlavour;
  /** Actors that get a bearer token (default: runner-medic, user, admin). */
  actors?: string[];
  historyLimit?: number;
  bookmarkIntervalMs?: number;
  /** Real ms a second of a watch's `timeoutSeconds` lasts (see HttpServerOptions). */
  watchSecondMs?: number;
  /**
   * Enforce RBAC on HTTP requests (default false: every authenticated request is allowed).
   * The in-process models (ARC, kubelet, Karpenter, ...) call KubeApi directly and are never
   * checked, as the controllers' own privileged identities would be.
   */
  rbac?: boolean;
  /** Extra groups per actor, beyond `system:authenticated` and the defaults below. */
  groups?: Record<string, string[]>;
}

/**
 * Groups the default actors authenticate with: `admin` is a cluster admin (`system:masters`);
 * `runner-medic` is in the group `infra/kubernetes/rbac*.yaml` binds (an EKS access entry maps the
 * Lambda role to it).
 */
const DEFAULT_ACTOR_GROUPS: Record<string, string[]> = {
  admin: ['system:masters'],
  'runner-medic': ['runner-medic'],
};

export class ApiServer {
  readonly api: KubeApi;
  readonly audit: AuditLog;
  readonly store: ObjectStore;
  private readonly http: KubeHttpServer;
  private readonly tokens = new Map<string, string>();
  private readonly groups = new Map<string, string[]>();
  private authorizer: RbacAuthorizer | undefined;

  constructor(private readonly options: ApiServerOptions) {
    this.store = new ObjectStore({ historyLimit: options.historyLimit });
    this.audit = new AuditLog();
    this.api = new KubeApi({
      clock: options.clock,
      rng: options.rng.fork('api'),
      schemaFlavour: options.schemaFlavour,
      store: this.store,
      audit: this.audit,
    });
    const tokenRng = options.rng.fork('tokens');
    for (const actor of options.actors ?? ['runner-medic', 'user', 'admin'])
      this.tokens.set(actor, `sim-${actor}-${hexId(tokenRng, 24)}`);
    for (const [actor, groups] of Object.entries({ ...DEFAULT_ACTOR_GROUPS, ...options.groups }))
      this.groups.set(actor, [...groups]);
    const byToken: Record<string, string> = {};
    this.http = new KubeHttpServer(this.api, options.clock, {
      tokens: byToken,
      bookmarkIntervalMs: options.bookmarkIntervalMs,
      watchSecondMs: options.watchSecondMs,
      users: (actor) => this.user(actor),
    });
    if (options.rbac) this.enableRbac();
    this.refreshTokens(byToken);
    this.byToken = byToken;
  }

  private readonly byToken: Record<string, string>;

  private refreshTokens(byToken: Record<string, string>): void {
    for (const [actor, token] of this.tokens) byToken[token] = actor;
  }

  /** The user a token of `actor` authenticates to (SelfSubjectReview shows it). */
  user(actor: string): UserInfo {
    const extra = this.groups.get(actor) ?? [];
    return {
      username: actor,
      groups:
        actor === 'anonymous' ? ['system:unauthenticated'] : [...extra, 'system:authenticated'],
    };
  }

  /** Replaces an actor's groups (besides `system:authenticated`). */
  setGroups(actor: string, groups: string[]): void {
    this.groups.set(actor, [...groups]);
  }

  /**
   * Turns RBAC enforcement on: seeds the bootstrap policy (discovery and self-reviews for every
   * authenticated user) and checks every HTTP request against the RBAC objects in the store.
   */
  enableRbac(): RbacAuthorizer {
    if (this.authorizer) return this.authorizer;
    for (const obj of bootstrapPolicy()) {
      const def = resourceByKind(obj.apiVersion, obj.kind);
      if (def && !this.api.tryGet(def, undefined, obj.metadata.name as string))
        this.api.create('kube-apiserver', def, undefined, obj);
    }
    this.authorizer = new RbacAuthorizer(this.store);
    this.http.authorizer = this.authorizer;
    return this.authorizer;
  }

  /** The RBAC authorizer when enforcement is on. */
  get rbac(): RbacAuthorizer | undefined {
    return this.authorizer;
  }

  /** Adds an actor (a new bearer token); returns its token. */
  addActor(actor: string, groups?: string[]): string {
    if (groups) this.setGroups(actor, groups);
    let token = this.tokens.get(actor);
    if (!token) {
      token = `sim-${actor}-${hexId(this.options.rng.fork(`token:${actor}`), 24)}`;
      this.tokens.set(actor, token);
      this.refreshTokens(this.byToken);
    }
    return token;
  }

  token(actor: string): string {
    const t = this.tokens.get(actor);
    if (!t) throw new Error(`no bearer token for actor ${actor}; call addActor first`);
    return t;
  }

  /** HTTPS URL (what kubeconfigs use). */
  get url(): string {
    return this.http.url;
  }

  /** Plain-HTTP URL of the same API, for raw fetches. */
  get httpUrl(): string {
    return this.http.httpUrl;
  }

  /** Injects API faults: `decide` returns the status to answer a request with, or undefined to serve it. */
  injectFaults(decide: ((actor: string, method: string) => number | undefined) | undefined): void {
    this.http.fault = decide;
  }

  /** The endpoint stops answering (`refused` or `503`) or, with `undefined`, answers again. */
  setUnreachable(mode: Unreachable | undefined): Promise<void> {
    return this.http.setUnreachable(mode);
  }

  /** PEM of the certificate the HTTPS listener presents. */
  get caPem(): string {
    return LOOPBACK_CA_PEM;
  }

  start(): Promise<string> {
    return this.http.start();
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  /** Cuts every watch stream, as an API server restart or a load balancer would. */
  closeWatches(): void {
    this.http.closeWatches();
  }

  kubeconfig(actor = 'runner-medic', namespace?: string): string {
    return renderKubeconfig({
      clusterName: this.options.clusterName,
      server: this.url,
      caPem: LOOPBACK_CA_PEM,
      user: actor,
      token: this.token(actor),
      namespace,
    });
  }
}
