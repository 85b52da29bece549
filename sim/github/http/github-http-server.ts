import { createServer } from 'node:http';
import { SUSPENDED_MESSAGE } from '../rest/app-routes.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock, SimClock } from '../../clock.js';
import type { AppCredentials } from '../auth/app-credentials.js';
import { checkAppJwt } from '../auth/app-credentials.js';
import type { Principal, TokenRegistry } from '../auth/token-registry.js';
import type { IdSource } from '../model/id-source.js';
import type { ApiFaults, FaultSpec } from './api-faults.js';
import type { RateLimiter } from './rate-limiter.js';
import { rateHeaders } from './rate-limiter.js';
import type { ApiResponse, Router } from './route.js';
import { error } from './route.js';

export interface HttpServerDeps {
  clock: SimClock;
  router: Router;
  tokens: TokenRegistry;
  credentials: AppCredentials;
  faults: ApiFaults;
  limiter: RateLimiter;
  ids: IdSource;
  /** The clock App JWTs' `iat`/`exp` are checked against. */
  jwtClock: Clock;
}

/** One served request, in arrival order. */
export interface RequestRecord {
  at: number;
  method: string;
  path: string;
  status: number;
  by: string;
}

/** GitHub's REST API on 127.0.0.1, on a random port. */
export class GitHubHttpServer {
  private server: Server | undefined;
  private url = '';
  private held = 0;
  private readonly heldWaiters: { count: number; resolve: () => void }[] = [];
  readonly requests: RequestRecord[] = [];

  constructor(private readonly deps: HttpServerDeps) {}

  get baseUrl(): string {
    if (!this.url) throw new Error('the GitHub simulator is not listening; call start() first');
    return this.url;
  }

  async start(): Promise<string> {
    if (this.server) return this.url;
    const server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.url = '';
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests currently held by simulated latency (released when the sim clock passes them). */
  heldRequests(): number {
    return this.held;
  }

  /** Resolves once at least `count` requests are held by simulated latency. */
  whenHeld(count = 1): Promise<void> {
    if (this.held >= count) return Promise.resolve();
    return new Promise((resolve) => this.heldWaiters.push({ count, resolve }));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', this.url);
    let outcome: { response: ApiResponse; by: string };
    try {
      outcome = await this.respond(method, url, raw, req.headers.authorization);
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      outcome = { response: error(500, `Simulator error: ${message}`), by: '' };
    }
    const { response, by } = outcome;
    this.requests.push({
      at: this.deps.clock.now(),
      method,
      path: url.pathname,
      status: response.status,
      by,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      date: new Date(this.deps.clock.now()).toUTCString(),
      'x-github-media-type': 'github.v3; format=json',
      'x-github-request-id': this.deps.ids.hex(8).toUpperCase(),
      ...response.headers,
    };
    res.writeHead(response.status, headers);
    res.end(
      response.status === 204 || response.body === undefined
        ? undefined
        : JSON.stringify(response.body),
    );
  }

  private async respond(
    method: string,
    url: URL,
    raw: string,
    authorization: string | undefined,
  ): Promise<{ response: ApiResponse; by: string }> {
    const found = this.deps.router.match(method, url.pathname);
    if (found === undefined || found === 'method-not-allowed')
      return { response: error(404, 'Not Found'), by: '' };
    let body: unknown = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        return { response: error(400, 'Problems parsing JSON'), by: '' };
      }
    }
    const token = /^(?:token|bearer)\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    let principal: Principal | undefined;
    let rateKey = 'app';
    if (found.route.auth === 'jwt') {
      if (!token) return { response: error(401, 'A JSON web token could not be decoded'), by: '' };
      const check = checkAppJwt(token, this.deps.credentials, this.deps.jwtClock.now());
      if (!check.ok) return { response: error(401, check.message), by: 'app' };
    } else {
      if (!token) return { response: error(401, 'Requires authentication'), by: '' };
      principal = this.deps.tokens.lookup(token);
      if (!principal) return { response: error(401, 'Bad credentials'), by: '' };
      if (principal.kind === 'installation' && principal.installation.suspendedAt !== undefined)
        return { response: error(403, SUSPENDED_MESSAGE), by: principal.by };
      rateKey =
        principal.kind === 'installation'
          ? `installation ${principal.installation.id}`
          : `user ${principal.login}`;
    }
    const by = principal?.by ?? 'app';
    const fault = this.deps.faults.evaluate(method, url.pathname, this.deps.clock.now());
    if (fault.latencyMs > 0) await this.hold(fault.latencyMs);
    const now = this.deps.clock.now();
    const lost = fault.error?.kind === 'lost-response' ? fault.error : undefined;
    if (fault.error && !lost)
      return {
        response: faultResponse(fault.error, now, rateKey, this.deps.limiter.peek(rateKey)?.limit),
        by,
      };
    let limitHeaders: Record<string, string> = {};
    if (url.pathname !== '/rate_limit') {
      const window = this.deps.limiter.take(rateKey, now);
      limitHeaders = rateHeaders(window);
      if (window.used > window.limit)
        return { response: error(403, primaryMessage(rateKey), limitHeaders), by };
    }
    const response = found.route.handler({
      method,
      path: url.pathname,
      query: url.searchParams,
      body,
      params: found.params,
      principal,
      baseUrl: this.url,
    });
    if (lost) {
      const status = lost.status ?? 502;
      return { response: error(status, status === 502 ? 'Server Error' : 'Gateway Timeout'), by };
    }
    return { response: { ...response, headers: { ...limitHeaders, ...response.headers } }, by };
  }

  private hold(ms: number): Promise<void> {
    this.held += 1;
    for (const waiter of [...this.heldWaiters]) {
      if (this.held < waiter.count) continue;
      this.heldWaiters.splice(this.heldWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    return new Promise((resolve) =>
      this.deps.clock.after(ms, 'github api latency', () => {
        this.held -= 1;
        resolve();
      }),
    );
  }
}

function faultResponse(spec: FaultSpec, nowMs: number, rateKey: string, limit = 5000): ApiResponse {
  if (spec.kind === 'primary-rate-limit') {
    const reset = Math.ceil(nowMs / 1000) + (spec.resetAfterS ?? 60);
    return error(spec.status ?? 403, primaryMessage(rateKey), {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used': String(limit),
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
    });
  }
  if (spec.kind === 'secondary-rate-limit') {
    return error(
      spec.status ?? 403,
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      { 'retry-after': String(spec.retryAfterS ?? 60) },
    );
  }
  const status = spec.kind === 'server-error' ? (spec.status ?? 500) : 500;
  return error(
    status,
    status === 503
      ? 'Service Unavailable'
      : status === 502
        ? 'Server Error'
        : 'Internal Server Error',
  );
}

function primaryMessage(rateKey: string): string {
  const installation = /^installation (\d+)$/.exec(rateKey)?.[1];
  return installation
    ? `API rate limit exceeded for installation ID ${installation}.`
    : 'API rate limit exceeded for user.';
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
