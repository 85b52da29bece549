import type { EKSClient } from '@aws-sdk/client-eks';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../ports/clock.js';
import {
  ClusterUnavailableError,
  type ClusterGateway,
  type ClusterGateways,
} from '../../ports/cluster-gateway.js';
import type { SecretClients } from '../secrets/secret-reader.js';
import { describeEksCluster, eksKubeConfig, type EksEndpoint } from './eks-cluster.js';
import { EksTokenSource, type AwsCredentialsProvider } from './eks-token.js';
import { KubeClusterGateway, type KubeClusterGatewayOptions } from './kube-cluster-gateway.js';
import {
  kubeConfigFromString,
  kubeconfigSource,
  type KubeconfigSecret,
} from './kubeconfig-source.js';

/** How runner-medic reaches one cluster. */
export type ClusterAccess =
  /** A kubeconfig document given directly (local runs, tests). */
  | { kind: 'kubeconfig'; kubeconfig: string; context?: string }
  /** A kubeconfig document kept in SSM (SecureString) or Secrets Manager. */
  | { kind: 'kubeconfig-secret'; secret: KubeconfigSecret; context?: string }
  /** EKS IAM auth: endpoint and CA from DescribeCluster, token from presigned STS. */
  | { kind: 'eks'; region: string; eksClusterName?: string; stsHostname?: string };

export interface ClusterConnectionsOptions {
  /** Keyed by the `clusterName` events carry. */
  clusters: Record<string, ClusterAccess>;
  clock: Clock;
  secretClients?: SecretClients;
  /** How long a kubeconfig read from AWS is cached (default 300 s). */
  secretCacheSeconds?: number;
  eks?: { client: (region: string) => EKSClient; credentials: AwsCredentialsProvider };
  gateway?: Pick<KubeClusterGatewayOptions, 'pageSize' | 'requestTimeoutMs' | 'onUnparseable'>;
}

/** The cluster name is not configured: runner-medic must not act there. */
export class UnknownClusterError extends Error {
  constructor(cluster: string) {
    super(`cluster ${JSON.stringify(cluster)} is not configured`);
    this.name = 'UnknownClusterError';
  }
}

interface Connection {
  /** Builds the KubeConfig for now; the same `key` means the same credentials. */
  resolve(): Promise<{ key: string; kubeConfig: () => KubeConfig }>;
  invalidate(): void;
}

/**
 * ClusterGateways over several clusters. Credentials are cached per container; a gateway is
 * rebuilt when its kubeconfig or EKS token changes, so call `forCluster` per invocation rather
 * than holding a gateway for longer than a minute.
 */
export class ClusterConnections implements ClusterGateways {
  private readonly connections = new Map<string, Connection>();
  private readonly gateways = new Map<string, { key: string; gateway: ClusterGateway }>();

  constructor(private readonly options: ClusterConnectionsOptions) {
    for (const [name, access] of Object.entries(options.clusters)) {
      this.connections.set(name, this.connect(name, access));
    }
  }

  clusters(): string[] {
    return [...this.connections.keys()];
  }

  async forCluster(cluster: string): Promise<ClusterGateway> {
    const connection = this.connections.get(cluster);
    if (!connection) throw new UnknownClusterError(cluster);
    let resolved: Awaited<ReturnType<Connection['resolve']>>;
    let kubeConfig: KubeConfig;
    try {
      resolved = await connection.resolve();
      const hit = this.gateways.get(cluster);
      if (hit?.key === resolved.key) return hit.gateway;
      kubeConfig = resolved.kubeConfig();
    } catch (e) {
      throw new ClusterUnavailableError(`cannot connect to cluster ${cluster}`, { cause: e });
    }
    const gateway = new KubeClusterGateway({
      ...this.options.gateway,
      cluster,
      kubeConfig,
      onUnauthorized: () => {
        this.gateways.delete(cluster);
        connection.invalidate();
      },
    });
    this.gateways.set(cluster, { key: resolved.key, gateway });
    return gateway;
  }

  private connect(name: string, access: ClusterAccess): Connection {
    switch (access.kind) {
      case 'kubeconfig':
        return {
          resolve: () =>
            Promise.resolve({
              key: access.kubeconfig,
              kubeConfig: () => kubeConfigFromString(access.kubeconfig, access.context),
            }),
          invalidate: () => undefined,
        };
      case 'kubeconfig-secret': {
        const read = kubeconfigSource(
          access.secret,
          this.options.secretClients ?? {},
          this.options.clock,
          this.options.secretCacheSeconds ?? 300,
        );
        return {
          resolve: async () => {
            const document = await read();
            return {
              key: document,
              kubeConfig: () => kubeConfigFromString(document, access.context),
            };
          },
          // The reader's cache runs out on its own; a rotated secret is read then.
          invalidate: () => undefined,
        };
      }
      case 'eks':
        return this.connectEks(name, access);
    }
  }

  private connectEks(name: string, access: Extract<ClusterAccess, { kind: 'eks' }>): Connection {
    const eks = this.options.eks;
    const eksName = access.eksClusterName ?? name;
    if (!eks) {
      const missing = new Error(`cluster ${name} uses EKS auth but no EKS client is configured`);
      return { resolve: () => Promise.reject(missing), invalidate: () => undefined };
    }
    const tokens = new EksTokenSource({
      clusterName: eksName,
      region: access.region,
      credentials: eks.credentials,
      clock: this.options.clock,
      hostname: access.stsHostname,
    });
    let endpoint: Promise<EksEndpoint> | undefined;
    return {
      resolve: async () => {
        const described = (endpoint ??= describeEksCluster(eks.client(access.region), eksName));
        described.catch(() => {
          if (endpoint === described) endpoint = undefined;
        });
        const [where, token] = await Promise.all([described, tokens.token()]);
        return {
          key: `${where.endpoint}\n${token.token}`,
          kubeConfig: () => eksKubeConfig(name, where, token.token),
        };
      },
      invalidate: () => {
        tokens.invalidate();
        endpoint = undefined;
      },
    };
  }
}
