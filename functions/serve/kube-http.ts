/**
 * Raw JSON requests to the API server with client-node's own authentication (the same
 * RequestContext and undici dispatcher its Watch uses), for the Lease and the informers' lists:
 * objects stay as the server wrote them (timestamps as strings), as the watch stream gives them.
 * One connection pool per requester (PooledKubeConfig): client-node builds a new undici Agent for
 * every request, so each Lease renewal opened a new TLS connection.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { fetch } from 'undici';
import { PooledKubeConfig } from '../adapters/kubernetes/pooled-kube-config.js';

/** A non-2xx answer: its HTTP status and the server's Status message. */
export class KubeHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeHttpError';
  }
}

const METHODS = {
  GET: HttpMethod.GET,
  POST: HttpMethod.POST,
  PUT: HttpMethod.PUT,
  DELETE: HttpMethod.DELETE,
} as const;

export type KubeRequest = (
  method: keyof typeof METHODS,
  path: string,
  body?: unknown,
) => Promise<Record<string, unknown>>;

/** Requests against the current cluster of `kc`, each bounded by `timeoutMs`. */
export function kubeRequester(source: KubeConfig, timeoutMs = 10_000): KubeRequest {
  const kc = PooledKubeConfig.from(source);
  return async (method, path, body) => {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new KubeHttpError(0, 'the kubeconfig names no current cluster');
    const url = new URL(server + path);
    const ctx = new RequestContext(url.toString(), METHODS[method]);
    await kc.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url, {
      method,
      headers,
      dispatcher: ctx.getDispatcher(),
      signal: AbortSignal.timeout(timeoutMs),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // A proxy's HTML error page: the status says enough.
    }
    if (!response.ok)
      throw new KubeHttpError(
        response.status,
        typeof json.message === 'string' ? json.message : `HTTP ${response.status}`,
      );
    return json;
  };
}
