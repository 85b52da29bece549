import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeconfigSecret } from '../../ports/cluster-access.js';
import type { Clock } from '../../ports/clock.js';
import type { SecretClients } from '../secrets/secret-reader.js';
import { kubeConfigFromString, kubeconfigSource } from './kubeconfig-source.js';

/** How to reach one cluster right now. */
export interface ClusterConnection {
  /** The same `key` means the same endpoint and credentials: a built client can be reused. */
  resolve(): Promise<{ key: string; kubeConfig: () => KubeConfig }>;
  /** Forget cached credentials (the API answered 401). */
  invalidate(): void;
}

/** A kubeconfig document given directly (local runs may use exec plugins). */
export function kubeconfigConnection(document: string, context?: string): ClusterConnection {
  return {
    resolve: () =>
      Promise.resolve({
        key: document,
        kubeConfig: () => kubeConfigFromString(document, { context, allowExec: true }),
      }),
    invalidate: () => undefined,
  };
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
        kubeConfig: () => kubeConfigFromString(document, { context: options.context }),
      };
    },
    invalidate: () => undefined,
  };
}
