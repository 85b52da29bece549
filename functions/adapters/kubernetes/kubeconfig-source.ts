import { KubeConfig } from '@kubernetes/client-node';
import type { KubeconfigSecret } from '../../ports/cluster-access.js';
import type { Clock } from '../../ports/clock.js';
import { RunnerMedicError } from '../../ports/errors.js';
import { createSecretReader, type SecretClients } from '../secrets/secret-reader.js';

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

/**
 * A KubeConfig from a YAML/JSON document, on `context` or its current context. Unless
 * `allowExec`, a user that runs a command or an auth provider (`aws eks get-token`, gcloud) is
 * refused: Lambda has no such tools; use EKS access instead.
 */
export function kubeConfigFromString(
  document: string,
  options: { context?: string; allowExec?: boolean } = {},
): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(document);
  if (options.context) kc.setCurrentContext(options.context);
  if (!kc.getContextObject(kc.getCurrentContext())) {
    throw new RunnerMedicError(
      'config',
      `the kubeconfig has no context ${JSON.stringify(kc.getCurrentContext())}`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new RunnerMedicError('config', 'the kubeconfig context names no known cluster');
  const user = kc.getCurrentUser();
  if (!options.allowExec && (user?.exec || user?.authProvider)) {
    throw new RunnerMedicError(
      'config',
      `the kubeconfig user ${user.name} needs an exec or auth-provider plugin`,
    );
  }
  return kc;
}
