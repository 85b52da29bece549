/*
 * One connection pool per cluster connection. @kubernetes/client-node 2.0 builds a new undici
 * Agent in `applySecurityAuthentication`, which its API clients call before every request
 * (config.ts `createDispatcher`; only the https.Agent of watch and exec is cached, by
 * kubernetes-client/javascript#2893): each Agent has its own pool, so every request opened a new
 * TCP and TLS connection and none was reused. Loaded with client-node, on a cluster's first use.
 */
import { KubeConfig, type RequestContext } from './client-node.js';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * A KubeConfig whose API clients send every request through the first dispatcher client-node
 * built for it (keep-alive, the same TLS settings: a KubeConfig's cluster and user do not
 * change). Credentials in headers (a bearer token, basic auth) are still applied per request by
 * client-node; a new credential or endpoint comes with a new KubeConfig and so a new pool.
 */
export class PooledKubeConfig extends KubeConfig {
  private dispatcher: Dispatcher | undefined;

  /** The same clusters, users, contexts and current context as `source`, pooled. */
  static from(source: KubeConfig): PooledKubeConfig {
    const pooled = new PooledKubeConfig();
    pooled.loadFromOptions({
      clusters: source.getClusters(),
      users: source.getUsers(),
      contexts: source.getContexts(),
      currentContext: source.getCurrentContext(),
    });
    return pooled;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    // No dispatcher: plain HTTP with no TLS setting, which undici's global agent pools already.
    this.dispatcher ??= context.getDispatcher();
    if (this.dispatcher) context.setDispatcher(this.dispatcher);
  }
}
