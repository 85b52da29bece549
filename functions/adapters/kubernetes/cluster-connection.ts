import type { KubeConfig } from './client-node.js';
import type { KubeconfigSecret } from '../../ports/cluster-access.js';
import type { Clock } from '../../ports/clock.js';
import { createSecretReader, type SecretClients } from '../secrets/secret-reader.js';
import type { KubeconfigOptions } from './kubeconfig-source.js';

/** How to reach one cluster right now. */
export interface ClusterConnection {
  /**
   * The same `key` means the same endpoint and credentials: a built client can be reused.
   * `kubeConfig` loads @kubernetes/client-node on its first call (see ClusterConnections).
   */
  resolve(): Promise<{ key: string; kubeConfig: () => Promise<KubeConfig> }>;
  /** Forget cached credentials (the API answered 401). */
  invalidate(): void;
}

/** A kubeconfig document given directly (local runs may use exec plugins). */
export function kubeconfigConnection(document: string, context?: string): ClusterConnection {
  return {
    resolve: () =>
      Promise.resolve({
        key: document,
        kubeConfig: () => kubeConfigFrom(document, { context, allowExec: true }),
      }),
    invalidate: () => undefined,
  };
}

/**
 * Reads a kubeconfig document from SSM (SecureString) or Secrets Manager, cached per container
 * for `cacheSeconds` so a rotated credential is picked up.
 */
export function kubeconfigSource(
  secret: KubeconfigSecret,
  clients: SecretClients,
  clock: Clock,
  cacheSeconds: number,
): () => Promise<string> {
  return createSecretReader(secret, clients, clock, cacheSeconds);
}

/** A kubeconfig document kept in SSM or Secrets Manager, re-read when its cache runs out. */
export function kubeconfigSecretConnection(
  secret: KubeconfigSecret,
  options: { clients: SecretClients; clock: Clock; cacheSeconds: number; context?: string },
): ClusterConnection {
  const read = kubeconfigSource(secret, options.clients, options.clock, options.cacheSeconds);
  return {
    resolve: async () => {
      const document = await read();
      return {
        key: document,
        kubeConfig: () => kubeConfigFrom(document, { context: options.context }),
      };
    },
    invalidate: () => undefined,
  };
}

/** Imported on first use, so that a function starts without @kubernetes/client-node. */
const kubeConfigFrom = async (document: string, options: KubeconfigOptions) =>
  (await import('./kubeconfig-source.js')).kubeConfigFromString(document, options);
