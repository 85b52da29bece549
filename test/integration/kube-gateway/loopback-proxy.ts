import { readFileSync } from 'node:fs';
import { request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** The sim's loopback certificate (CA:TRUE, SAN 127.0.0.1): the proxy serves TLS with it. */
const tlsDir = new URL('../../../sim/kube/api/tls/', import.meta.url);
export const LOOPBACK_CA_PEM = readFileSync(new URL('loopback-cert.pem', tlsDir), 'utf8');
const LOOPBACK_KEY_PEM = readFileSync(new URL('loopback-key.pem', tlsDir), 'utf8');

export interface ProxyRequest {
  method: string;
  /** Path and query. */
  url: string;
  authorization: string | undefined;
  body: string;
}

export type Reply = { status: number; body: unknown };

/**
 * A loopback HTTPS proxy in front of a plain-HTTP test server. `intercept` may answer a request itself
 * (a fault), `beforeForward` may change the world first (a race), and `authorize` may swap the
 * bearer token (an authenticator in front of the API server).
 */
export class LoopbackProxy {
  readonly seen: ProxyRequest[] = [];
  /** `hang`: never answer (the client's timeout must fire). */
  intercept: ((req: ProxyRequest) => Reply | 'hang' | undefined) | undefined;
  beforeForward: ((req: ProxyRequest) => void) | undefined;
  authorize: ((authorization: string | undefined) => string | Reply) | undefined;
  /** Requests received and not yet answered, by method and whether a watch: now and at most. */
  readonly inFlight = new Map<string, { now: number; most: number }>();
  private server: Server | undefined;
  private port = 0;

  constructor(private readonly target: string) {}

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    const server = createServer({ cert: LOOPBACK_CA_PEM, key: LOOPBACK_KEY_PEM }, (req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        res.writeHead(502);
        res.end(String(e));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const kind = `${req.method} ${req.url?.includes('watch=true') ? 'watch' : 'request'}`;
    const count = this.inFlight.get(kind) ?? { now: 0, most: 0 };
    this.inFlight.set(kind, count);
    count.now++;
    count.most = Math.max(count.most, count.now);
    res.on('close', () => count.now--);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen: ProxyRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      authorization: req.headers.authorization,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    this.seen.push(seen);
    const fault = this.intercept?.(seen);
    if (fault === 'hang') return;
    if (fault) return reply(res, fault);
    const headers = { ...req.headers };
    if (this.authorize) {
      const auth = this.authorize(seen.authorization);
      if (typeof auth !== 'string') return reply(res, auth);
      headers.authorization = auth;
    }
    this.beforeForward?.(seen);
    const target = new URL(this.target);
    await new Promise<void>((resolve, reject) => {
      const out = request(
        { host: target.hostname, port: target.port, method: seen.method, path: seen.url, headers },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
          upstream.on('end', resolve);
        },
      );
      out.on('error', reject);
      out.end(seen.body);
    });
  }
}

function reply(res: ServerResponse, r: Reply): void {
  const text = JSON.stringify(r.body);
  res.writeHead(r.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A Kubernetes `Status` failure body. */
export function status(code: number, reason: string, message: string): Reply {
  return {
    status: code,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason,
      message,
      code,
    },
  };
}

/** A kubeconfig pointing at `server` (trusting the loopback CA) with a bearer `token`. */
export function kubeconfigYaml(server: string, token: string, name = 'c'): string {
  const ca = Buffer.from(LOOPBACK_CA_PEM).toString('base64');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name, context: { cluster: name, user: 'u' } }],
    'current-context': name,
  });
}
