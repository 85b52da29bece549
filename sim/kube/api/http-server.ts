/**
 * The Kubernetes API on 127.0.0.1 (random ports), with bearer-token auth. Each token maps to an
 * actor name that the audit log records. Requests are translated into KubeApi calls.
 *
 * It listens twice with one handler: plain HTTP (`httpUrl`, for raw fetches) and HTTPS with a
 * bundled loopback certificate (`url`, used by kubeconfigs), because client-go/kubectl will not
 * send a bearer token over plain HTTP.
 */

/** PEM of the loopback CA/server certificate (see tls/README.md). */
export const LOOPBACK_CA_PEM = readFileSync(
  new URL('./tls/loopback-cert.pem', import.meta.url),
  'utf8',
);
const LOOPBACK_KEY_PEM = readFileSync(new URL('./tls/loopback-key.pem', import.meta.url), 'utf8');
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../clock.js';
import { ApiError, errors } from './errors.js';
import { discovery } from './discovery.js';
import { loadFieldModels, parseFieldValidation } from './field-validation.js';
import type { DeleteOptions, KubeApi } from './kube-api.js';
import { patchTypeFromContentType } from './patch.js';
import { apiVersionOf, type ResourceDef } from './resources.js';
import { forbidden, type Decision, type RequestAttributes, type UserInfo } from './rbac.js';
import type { RequestLogEntry } from './audit.js';
import { route, type Route } from './router.js';
import { toTable, wantsTable } from './table.js';
import { serveWatch } from './watch.js';

export interface HttpServerOptions {
  /** Bearer token → actor name. */
  tokens: Record<string, string>;
  /** Real milliseconds between watch bookmarks (default 5 s; client-node times out after 30 s idle). */
  bookmarkIntervalMs?: number;
  /**
   * Real milliseconds that a second of a watch's `timeoutSeconds` lasts, and so of the 2 s before
   * it when the pre-deadline bookmark comes (default 1000). The scenario runner shortens it: its
   * clock stands still while a handler waits on a watch, so the wait proves nothing but costs
   * real time; the order of events, bookmark and end on the stream stays the same. Unset, it is
   * `SIM_KUBE_WATCH_SECOND_MS` when that is set (jest's setup sets 10: see setup-env.ts).
   */
  watchSecondMs?: number;
  /** Largest request body accepted (default 3 MiB, like the real server). */
  maxBodyBytes?: number;
  /** Actor name → the user and groups its token authenticates to (default: the name, no groups). */
  users?: (actor: string) => UserInfo;
}

/** Decides requests when set (RBAC); unset, every authenticated request is allowed. */
export interface Authorizer {
  authorize(user: UserInfo, attrs: RequestAttributes): Decision;
}

/** How an unreachable endpoint fails its callers. */
export type Unreachable = 'refused' | '503';

export class KubeHttpServer {
  /** Answers a request with this status (a 5xx `Status`) instead of serving it, when set and it says so. */
  fault: ((actor: string, method: string) => number | undefined) | undefined;
  /** RBAC (or another authorizer); undefined = AlwaysAllow. */
  authorizer: Authorizer | undefined;
  private servers: Server[] = [];
  private readonly stops = new Set<() => void>();
  /** While set, the endpoint does not answer: see `setUnreachable`. */
  private unreachable: Unreachable | undefined;
  private portNumber = 0;
  private tlsPort = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly clock: Clock,
    private readonly options: HttpServerOptions,
  ) {}

  /** HTTPS endpoint (certificate: LOOPBACK_CA_PEM). */
  get url(): string {
    if (this.servers.length === 0) throw new Error('the Kubernetes API server is not started');
    return `https://127.0.0.1:${this.tlsPort}`;
  }

  /** Plain-HTTP endpoint, same API. */
  get httpUrl(): string {
    if (this.servers.length === 0) throw new Error('the Kubernetes API server is not started');
    return `http://127.0.0.1:${this.portNumber}`;
  }

  async start(): Promise<string> {
    if (this.servers.length) return this.url;
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((e: unknown) => this.fail(res, e));
    };
    const plain = createServer(handler);
    const tls = createTlsServer({ cert: LOOPBACK_CA_PEM, key: LOOPBACK_KEY_PEM }, handler);
    for (const server of [plain, tls]) {
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    this.servers = [plain, tls];
    this.portNumber = (plain.address() as AddressInfo).port;
    this.tlsPort = (tls.address() as AddressInfo).port;
    return this.url;
  }

  /**
   * The endpoint stops answering, as an EKS API endpoint does when it cannot be reached from the
   * caller's network: `refused` closes both listeners and every open connection (clients get
   * ECONNREFUSED, as from a security group that rejects or an endpoint gone private), `503` keeps
   * them open and answers every request 503 ServiceUnavailable (a load balancer with no healthy
   * API server behind it). `undefined` answers again, on the same ports, so kubeconfigs stay valid.
   * Only HTTP clients are affected: the in-cluster models (ARC, kubelets, the exporter) keep
   * running, as they do when only the path from runner-medic's VPC to the endpoint is broken.
   */
  async setUnreachable(mode: Unreachable | undefined): Promise<void> {
    if (this.servers.length === 0) throw new Error('the Kubernetes API server is not started');
    const was = this.unreachable;
    this.unreachable = mode;
    if (mode !== undefined) this.closeWatches();
    if (mode === 'refused' && was !== 'refused') {
      for (const server of this.servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
    if (mode !== 'refused' && was === 'refused') {
      const ports = [this.portNumber, this.tlsPort];
      for (const [i, server] of this.servers.entries()) {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(ports[i], '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
      }
    }
  }

  /** Ends every open watch stream (clients reconnect from their last resourceVersion). */
  closeWatches(): void {
    for (const s of [...this.stops]) s();
  }

  async stop(): Promise<void> {
    this.closeWatches();
    const servers = this.servers;
    this.servers = [];
    if (this.unreachable === 'refused') return;
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private actorFor(req: IncomingMessage): string | undefined {
    const h = req.headers.authorization;
    const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
    return m ? this.options.tokens[m[1] as string] : undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const actor = this.actorFor(req);
    const log = (verb: string, code: number, objects?: number) => {
      const entry: RequestLogEntry = {
        at: this.clock.now(),
        by: actor ?? 'anonymous',
        method,
        path: url.pathname + url.search,
        verb,
        code,
        ...(objects === undefined ? {} : { objects }),
      };
      this.api.audit.request(entry);
      return entry;
    };
    const r = route(url.pathname);
    if (this.unreachable === '503') {
      log('unavailable', 503);
      return this.send(res, 503, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server is currently unable to handle the request',
        reason: 'ServiceUnavailable',
        code: 503,
      });
    }
    if (!actor) {
      if (r.kind === 'discovery' && /^\/(version|healthz|livez|readyz)$/.test(r.path)) {
        // system:public-info-viewer lets anyone read these.
      } else {
        log('unauthorized', 401);
        return this.send(res, 401, errors.unauthorized().toStatus());
      }
    }
    const who = actor ?? 'anonymous';
    const injected = this.fault?.(who, method);
    if (injected !== undefined) {
      log('injected-fault', injected);
      return this.send(res, injected, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'injected fault: the server is currently unable to handle the request',
        reason: 'ServiceUnavailable',
        code: injected,
      });
    }
    if (r.kind === 'unknown') {
      log('unknown', 404);
      return this.send(res, 404, noSuchPath().toStatus());
    }
    const user = this.userOf(who);
    if (r.kind === 'discovery' && actor) {
      const attrs: RequestAttributes = {
        verb: method.toLowerCase(),
        resourceRequest: false,
        path: r.path,
      };
      const decision = this.authorizer?.authorize(user, attrs);
      if (decision && !decision.allowed) {
        log('discovery', 403);
        return this.send(res, 403, forbidden(user, attrs, decision.reason).toStatus());
      }
    }
    if (r.kind === 'discovery') {
      const body =
        method === 'GET'
          ? discovery(r.path, `127.0.0.1:${req.socket.localPort ?? this.tlsPort}`)
          : undefined;
      log('discovery', body === undefined ? 404 : 200);
      if (body === undefined) return this.send(res, 404, noSuchPath().toStatus());
      if (typeof body === 'string') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(body);
        return;
      }
      return this.send(res, 200, body);
    }

    const { def, name, subresource } = r;
    const ns = def.namespaced ? r.namespace : undefined;
    const q = url.searchParams;
    const dryRun = q.getAll('dryRun').includes('All');
    let verb = 'unknown';
    try {
      const fieldValidation = parseFieldValidation(method, q.get('fieldValidation'));
      if (fieldValidation === 'Strict') await loadFieldModels();
      const attrs = requestAttributes(method, r, q);
      const decision = this.authorizer?.authorize(user, attrs);
      if (decision && !decision.allowed) {
        verb = attrs.verb;
        throw forbidden(user, attrs, decision.reason);
      }
      if (def.review) {
        verb = 'create';
        if (method !== 'POST' || name)
          throw new ApiError(
            405,
            'MethodNotAllowed',
            'the server does not allow this method on the requested resource',
          );
        const body = this.review(def, user, await readJson(req, this.options.maxBodyBytes));
        log(verb, 201);
        return this.send(res, 201, body);
      }
      if (
        subresource &&
        !(subresource === 'status' && def.subresources.includes('status')) &&
        !(subresource === 'eviction' && def.subresources.includes('eviction'))
      ) {
        throw noSuchPath();
      }
      if (method === 'GET' && (r.watchPath || isTrue(q.get('watch')))) {
        verb = 'watch';
        if (subresource)
          throw new ApiError(405, 'MethodNotAllowed', 'watch is not supported on subresources');
        const entry = log(verb, 200, 0);
        serveWatch(
          this.api,
          req,
          res,
          {
            def,
            namespace: r.namespace,
            name,
            labelSelector: q.get('labelSelector') ?? undefined,
            fieldSelector: fieldSelectorWithName(q.get('fieldSelector'), name),
            resourceVersion: q.get('resourceVersion') ?? undefined,
            allowWatchBookmarks: isTrue(q.get('allowWatchBookmarks')),
            timeoutSeconds: q.get('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined,
            bookmarkIntervalMs: this.options.bookmarkIntervalMs ?? 5_000,
            secondMs: this.options.watchSecondMs ?? defaultWatchSecondMs(),
            onObject: () => void (entry.objects = (entry.objects ?? 0) + 1),
            render: wantsTable(req.headers.accept)
              ? (o) =>
                  toTable(
                    def,
                    [o],
                    { resourceVersion: String(o.metadata.resourceVersion) },
                    q.get('includeObject') ?? 'Metadata',
                    this.clock.now(),
                  )
              : undefined,
          },
          (stop) => {
            this.stops.add(stop);
            res.on('close', () => this.stops.delete(stop));
          },
        );
        return;
      }
      let code = 200;
      let body: unknown;
      let objects: number | undefined;
      switch (method) {
        case 'GET':
          if (name) {
            verb = 'get';
            body = this.api.get(def, ns, name);
            objects = 1;
            if (wantsTable(req.headers.accept))
              body = toTable(
                def,
                [body as never],
                {
                  resourceVersion: String(
                    (body as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
                  ),
                },
                q.get('includeObject') ?? 'Metadata',
                this.clock.now(),
              );
          } else {
            verb = 'list';
            const list = this.api.list(def, ns, {
              labelSelector: q.get('labelSelector') ?? undefined,
              fieldSelector: q.get('fieldSelector') ?? undefined,
              limit: q.get('limit') ? Number(q.get('limit')) : undefined,
              continue: q.get('continue') ?? undefined,
            });
            objects = list.items.length;
            const meta = {
              resourceVersion: list.resourceVersion,
              ...(list.continue ? { continue: list.continue } : {}),
              ...(list.remainingItemCount !== undefined
                ? { remainingItemCount: list.remainingItemCount }
                : {}),
            };
            body = wantsTable(req.headers.accept)
              ? toTable(
                  def,
                  list.items,
                  meta,
                  q.get('includeObject') ?? 'Metadata',
                  this.clock.now(),
                )
              : {
                  kind: def.listKind,
                  apiVersion: apiVersionOf(def),
                  metadata: meta,
                  items: list.items,
                };
          }
          break;
        case 'POST': {
          const input = await readJson(req, this.options.maxBodyBytes);
          if (subresource === 'eviction' && name) {
            verb = 'evict';
            body = this.api.evict(who, ns as string, name, input);
            code = 201;
          } else if (!name && !subresource) {
            verb = 'create';
            body = this.api.create(who, def, ns, input, { dryRun, fieldValidation });
            code = 201;
          } else
            throw new ApiError(
              405,
              'MethodNotAllowed',
              'the server does not allow this method on the requested resource',
            );
          break;
        }
        case 'PUT':
          verb = 'update';
          if (!name)
            throw new ApiError(
              405,
              'MethodNotAllowed',
              'the server does not allow this method on the requested resource',
            );
          body = this.api.update(
            who,
            def,
            ns,
            name,
            await readJson(req, this.options.maxBodyBytes),
            {
              dryRun,
              fieldValidation,
              subresource: subresource === 'status' ? 'status' : undefined,
            },
          );
          break;
        case 'PATCH': {
          verb = 'patch';
          if (!name)
            throw new ApiError(
              405,
              'MethodNotAllowed',
              'the server does not allow this method on the requested resource',
            );
          const type = patchTypeFromContentType(req.headers['content-type']);
          if (!type) throw errors.unsupportedMediaType(req.headers['content-type'] ?? '');
          const raw = await readBody(req, this.options.maxBodyBytes);
          if (type === 'apply')
            throw errors.unsupportedMediaType(
              'application/apply-patch+yaml (server-side apply is not simulated)',
            );
          body = this.api.patch(who, def, ns, name, type, parseJson(raw), {
            dryRun,
            fieldValidation,
            subresource: subresource === 'status' ? 'status' : undefined,
          });
          break;
        }
        case 'DELETE': {
          const raw = await readBody(req, this.options.maxBodyBytes);
          const opts = deleteOptions(raw ? parseJson(raw) : {}, q);
          if (name) {
            verb = 'delete';
            body = this.api.delete(who, def, ns, name, opts).object;
          } else {
            verb = 'deletecollection';
            const list = this.api.deleteCollection(
              who,
              def,
              ns,
              {
                labelSelector: q.get('labelSelector') ?? undefined,
                fieldSelector: q.get('fieldSelector') ?? undefined,
              },
              opts,
            );
            body = {
              kind: def.listKind,
              apiVersion: apiVersionOf(def),
              metadata: { resourceVersion: list.resourceVersion },
              items: list.items,
            };
          }
          break;
        }
        default:
          throw new ApiError(405, 'MethodNotAllowed', `method ${method} is not allowed`);
      }
      log(verb, code, objects);
      this.send(res, code, body);
    } catch (e) {
      log(verb, e instanceof ApiError ? e.code : 500);
      this.fail(res, e);
    }
  }

  userOf(actor: string): UserInfo {
    return this.options.users?.(actor) ?? { username: actor, groups: [] };
  }

  /** SelfSubjectAccessReview / SelfSubjectReview: answered from the caller's own identity. */
  private review(def: ResourceDef, user: UserInfo, input: unknown): unknown {
    const body = (input && typeof input === 'object' ? input : {}) as {
      spec?: {
        resourceAttributes?: Record<string, string | undefined>;
        nonResourceAttributes?: { path?: string; verb?: string };
      };
      metadata?: Record<string, unknown>;
    };
    const head = {
      kind: def.kind,
      apiVersion: apiVersionOf(def),
      metadata: {
        creationTimestamp: null,
        ...(body.metadata?.name ? { name: body.metadata.name } : {}),
      },
    };
    if (def.kind === 'SelfSubjectReview')
      return {
        ...head,
        status: {
          userInfo: {
            username: user.username,
            ...(user.uid ? { uid: user.uid } : {}),
            groups: user.groups,
          },
        },
      };
    const spec = body.spec ?? {};
    const ra = spec.resourceAttributes;
    const nra = spec.nonResourceAttributes;
    if ((ra ? 1 : 0) + (nra ? 1 : 0) !== 1)
      throw errors.invalid({ group: def.group, resource: def.plural, name: '' }, def.kind, [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.resourceAttributes',
          message: `Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
        },
      ]);
    const attrs: RequestAttributes = ra
      ? {
          verb: ra.verb ?? '',
          resourceRequest: true,
          apiGroup: ra.group ?? '',
          apiVersion: ra.version,
          resource: ra.resource ?? '',
          subresource: ra.subresource ?? '',
          namespace: ra.namespace ?? '',
          name: ra.name ?? '',
        }
      : { verb: nra?.verb ?? '', resourceRequest: false, path: nra?.path ?? '' };
    const decision = this.authorizer?.authorize(user, attrs) ?? { allowed: true, reason: '' };
    return {
      ...head,
      spec,
      status: {
        allowed: decision.allowed,
        ...(decision.reason ? { reason: decision.reason } : {}),
      },
    };
  }

  private fail(res: ServerResponse, e: unknown): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const err =
      e instanceof ApiError ? e : errors.internal(e instanceof Error ? e.message : String(e));
    this.send(res, err.code, err.toStatus());
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  }
}

/**
 * authorizer.Attributes of a resource request, as the apiserver's RequestInfoFactory derives them
 * (staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): the verb from the method,
 * a Namespace object's own name as its namespace, the name of a list/watch from a
 * `metadata.name=` field selector.
 */
function requestAttributes(
  method: string,
  r: Extract<Route, { kind: 'resource' }>,
  q: URLSearchParams,
): RequestAttributes {
  const { def } = r;
  let name = r.name;
  let verb: string;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = r.watchPath || isTrue(q.get('watch')) ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = method.toLowerCase();
  }
  if (!name && (verb === 'list' || verb === 'watch')) {
    const fs = q.get('fieldSelector') ?? '';
    const m = /^metadata\.name==?([^,]+)$/.exec(fs);
    if (m) name = m[1];
  }
  let namespace = def.namespaced ? (r.namespace ?? '') : '';
  if (def.plural === 'namespaces' && r.name) namespace = r.name;
  return {
    verb,
    resourceRequest: true,
    apiGroup: def.group,
    apiVersion: def.version,
    resource: def.plural,
    subresource: r.subresource ?? '',
    namespace,
    name: name ?? '',
  };
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

function fieldSelectorWithName(fs: string | null, name: string | undefined): string | undefined {
  if (!name) return fs ?? undefined;
  const byName = `metadata.name=${name}`;
  return fs ? `${fs},${byName}` : byName;
}

async function readBody(req: IncomingMessage, max = 3 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max)
      throw new ApiError(413, 'BadRequest', 'Request entity too large: limit is 3145728');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw errors.badRequest(
      `error decoding request body: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

async function readJson(req: IncomingMessage, max?: number): Promise<unknown> {
  const raw = await readBody(req, max);
  if (raw.trim() === '') throw errors.badRequest('the request body is empty');
  return parseJson(raw);
}

function deleteOptions(body: unknown, q: URLSearchParams): DeleteOptions {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const opts: DeleteOptions = {};
  const grace =
    b.gracePeriodSeconds ??
    (q.get('gracePeriodSeconds') !== null ? Number(q.get('gracePeriodSeconds')) : undefined);
  if (grace !== undefined && grace !== null) {
    if (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0)
      throw errors.badRequest('gracePeriodSeconds must be a non-negative integer');
    opts.gracePeriodSeconds = grace;
  }
  const policy = b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan')
      throw errors.badRequest(
        `propagationPolicy: Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan"`,
      );
    opts.propagationPolicy = policy;
  }
  if (b.orphanDependents === true) opts.propagationPolicy = 'Orphan';
  const pre = b.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
  if (pre)
    opts.preconditions = {
      uid: pre.uid as string | undefined,
      resourceVersion: pre.resourceVersion as string | undefined,
    };
  const dry = b.dryRun;
  opts.dryRun = (Array.isArray(dry) && dry.includes('All')) || q.getAll('dryRun').includes('All');
  return opts;
}

export type { ResourceDef };

/** The 404 the real server gives for a path it does not serve at all. */
function noSuchPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

/** Real ms per second of a watch's `timeoutSeconds` when the server's options do not say. */
function defaultWatchSecondMs(): number {
  const fromEnv = Number(process.env.SIM_KUBE_WATCH_SECOND_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 1_000;
}
