import type { EKSClient } from '@aws-sdk/client-eks';
import type { KubeConfig } from './client-node.js';
import type { ClusterAccess } from '../../ports/cluster-access.js';
import type { Clock } from '../../ports/clock.js';
import {
  ClusterUnavailableError,
  type ClusterGateway,
  type ClusterGateways,
} from '../../ports/cluster-gateway.js';
import { RunnerMedicError } from '../../ports/errors.js';
import type { SecretClients } from '../secrets/secret-reader.js';
import {
  kubeconfigConnection,
  kubeconfigSecretConnection,
  type ClusterConnection,
} from './cluster-connection.js';
import { eksConnection } from './eks-connection.js';
import type { AwsCredentialsProvider } from './eks-token.js';
import type { KubeClusterGatewayOptions } from './kube-cluster-gateway.js';

export interface ClusterConnectionsOptions {
  /** Keyed by the `clusterName` events carry. */
  clusters: Record<string, ClusterAccess>;
  clock: Clock;
  secretClients?: SecretClients;
  /** How long a kubeconfig read from AWS is cached (default 300 s). */
  secretCacheSeconds?: number;
  eks?: { client: (region: string) => EKSClient; credentials: AwsCredentialsProvider };
  /** How long DescribeCluster's endpoint and CA are cached (default 3600 s). */
  describeCacheSeconds?: number;
  gateway?: Pick<KubeClusterGatewayOptions, 'pageSize' | 'requestTimeoutMs' | 'onUnparseable'>;
}

/** The cluster name is not configured: runner-medic refuses to act there. */
export class UnknownClusterError extends RunnerMedicError {
  constructor(cluster: string) {
    super('refused', `cluster ${JSON.stringify(cluster)} is not configured`);
    this.name = 'UnknownClusterError';
  }
}

/**
 * ClusterGateways over several clusters. Credentials are cached per container; a gateway is
 * rebuilt when its kubeconfig or EKS token changes, so call `forCluster` per invocation rather
 * than holding a gateway for longer than a minute. A gateway's requests share one pool of
 * keep-alive connections (pooled-kube-config.ts), which a warm container keeps between
 * invocations until undici's idle timeout closes them.
 *
 * @kubernetes/client-node (with undici under it) is imported when a cluster is first reached, not
 * when the function starts: it is 1.2 MB of the 2.6 MB engine bundles and most of their start-up
 * above the AWS SDK's, and a remediate run whose trigger reaches no cluster (a job event already
 * on record, or for no scale set runner-medic knows) never needs it.
 */
export class ClusterConnections implements ClusterGateways {
  private readonly connections = new Map<string, ClusterConnection>();
  private readonly scopes = new Map<string, readonly string[] | null>();
  private readonly gateways = new Map<string, { key: string; gateway: ClusterGateway }>();

  constructor(private readonly options: ClusterConnectionsOptions) {
    for (const [name, access] of Object.entries(options.clusters)) {
      this.connections.set(name, this.connect(name, access));
      this.scopes.set(
        name,
        access.namespaces && access.namespaces.length > 0 ? access.namespaces : null,
      );
    }
  }

  clusters(): string[] {
    return [...this.connections.keys()];
  }

  namespaces(cluster: string): readonly string[] | null {
    return this.scopes.get(cluster) ?? null;
  }

  async forCluster(cluster: string): Promise<ClusterGateway> {
    const connection = this.connections.get(cluster);
    if (!connection) throw new UnknownClusterError(cluster);
    let resolved: Awaited<ReturnType<ClusterConnection['resolve']>>;
    let kubeConfig: KubeConfig;
    try {
      resolved = await connection.resolve();
      const hit = this.gateways.get(cluster);
      if (hit?.key === resolved.key) return hit.gateway;
      kubeConfig = await resolved.kubeConfig();
    } catch (e) {
      throw new ClusterUnavailableError(`cannot connect to cluster ${cluster}`, { cause: e });
    }
    const [{ KubeClusterGateway }, { PooledKubeConfig }] = await Promise.all([
      import('./kube-cluster-gateway.js'),
      import('./pooled-kube-config.js'),
    ]);
    const gateway: ClusterGateway = new KubeClusterGateway({
      ...this.options.gateway,
      cluster,
      // Its requests share one keep-alive pool, for as long as the gateway is the cluster's.
      kubeConfig: PooledKubeConfig.from(kubeConfig),
      onUnauthorized: () => {
        if (this.gateways.get(cluster)?.gateway !== gateway) return;
        this.gateways.delete(cluster);
        connection.invalidate();
      },
    });
    this.gateways.set(cluster, { key: resolved.key, gateway });
    return gateway;
  }

  private connect(name: string, access: ClusterAccess): ClusterConnection {
    return connectionFor(name, access, this.options);
  }
}

/** How to reach one cluster, by its kind of access; caches as `options` say (default 300 s / 1 h). */
export function connectionFor(
  name: string,
  access: ClusterAccess,
  options: Omit<ClusterConnectionsOptions, 'clusters' | 'gateway'>,
): ClusterConnection {
  switch (access.kind) {
    case 'kubeconfig':
      return kubeconfigConnection(access.kubeconfig, access.context);
    case 'kubeconfig-secret':
      return kubeconfigSecretConnection(access.secret, {
        clients: options.secretClients ?? {},
        clock: options.clock,
        cacheSeconds: options.secretCacheSeconds ?? 300,
        context: access.context,
      });
    case 'eks': {
      const eks = options.eks;
      if (!eks) {
        const missing = new RunnerMedicError(
          'config',
          `cluster ${name} uses EKS auth but no EKS client is configured`,
        );
        return { resolve: () => Promise.reject(missing), invalidate: () => undefined };
      }
      return eksConnection({
        cluster: name,
        eksClusterName: access.eksClusterName ?? name,
        region: access.region,
        client: () => eks.client(access.region),
        credentials: eks.credentials,
        clock: options.clock,
        describeCacheSeconds: options.describeCacheSeconds ?? 3600,
      });
    }
  }
}
