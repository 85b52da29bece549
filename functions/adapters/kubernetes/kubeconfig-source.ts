import { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../ports/clock.js';
import { createSecretReader, type SecretClients } from '../secrets/secret-reader.js';

/** Where a kubeconfig document is kept in AWS. */
export type KubeconfigSecret =
  { kind: 'ssm'; name: string } | { kind: 'secrets-manager'; id: string };

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

/** A KubeConfig from a YAML/JSON document, on `context` or its current context. */
export function kubeConfigFromString(document: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(document);
  if (context) kc.setCurrentContext(context);
  if (!kc.getContextObject(kc.getCurrentContext())) {
    throw new Error(`the kubeconfig has no context ${JSON.stringify(kc.getCurrentContext())}`);
  }
  if (!kc.getCurrentCluster()) throw new Error('the kubeconfig context names no known cluster');
  return kc;
}
