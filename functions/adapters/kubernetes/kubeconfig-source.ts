/*
 * Where a KubeConfig comes from. Loaded on a cluster's first use (cluster-connection.ts): this is
 * the module that brings @kubernetes/client-node.
 */
import { KubeConfig } from './client-node.js';
import { RunnerMedicError } from '../../ports/errors.js';
import type { EksEndpoint } from './eks-cluster.js';

export interface KubeconfigOptions {
  context?: string;
  allowExec?: boolean;
}

/**
 * A KubeConfig from a YAML/JSON document, on `context` or its current context. Unless
 * `allowExec`, a user that runs a command or an auth provider (`aws eks get-token`, gcloud) is
 * refused: Lambda has no such tools; use EKS access instead.
 */
export function kubeConfigFromString(
  document: string,
  options: KubeconfigOptions = {},
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

/** A KubeConfig that sends `token` as the bearer to the EKS endpoint, trusting its CA. */
export function eksKubeConfig(name: string, endpoint: EksEndpoint, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name, server: endpoint.endpoint, caData: endpoint.caData, skipTLSVerify: false },
    { name: 'runner-medic', token },
  );
  return kc;
}
