import type { EKSClient } from '@aws-sdk/client-eks';
import type { Clock } from '../../ports/clock.js';
import type { ClusterConnection } from './cluster-connection.js';
import { describeEksCluster, type EksEndpoint } from './eks-cluster.js';
import { EksTokenSource, type AwsCredentialsProvider } from './eks-token.js';

export interface EksConnectionOptions {
  /** runner-medic's name for the cluster. */
  cluster: string;
  /** The EKS cluster name, for DescribeCluster and `x-k8s-aws-id`. */
  eksClusterName: string;
  region: string;
  client: () => EKSClient;
  credentials: AwsCredentialsProvider;
  clock: Clock;
  /** How long the endpoint and CA are cached. */
  describeCacheSeconds: number;
}

/** EKS IAM auth: endpoint and CA from DescribeCluster (cached), a presigned token (cached). */
export function eksConnection(options: EksConnectionOptions): ClusterConnection {
  const { clock } = options;
  const tokens = new EksTokenSource({
    clusterName: options.eksClusterName,
    region: options.region,
    credentials: options.credentials,
    clock,
  });
  let client: EKSClient | undefined;
  let endpoint: { value: Promise<EksEndpoint>; until: number } | undefined;
  const describe = (): Promise<EksEndpoint> => {
    const now = clock.now();
    if (endpoint && now < endpoint.until) return endpoint.value;
    client ??= options.client();
    const value = describeEksCluster(client, options.eksClusterName);
    const entry = { value, until: now + options.describeCacheSeconds * 1000 };
    endpoint = entry;
    value.catch(() => {
      if (endpoint === entry) endpoint = undefined;
    });
    return value;
  };
  return {
    resolve: async () => {
      const [where, token] = await Promise.all([describe(), tokens.token()]);
      return {
        key: `${where.endpoint}\n${where.caData}\n${token.token}`,
        kubeConfig: async () =>
          (await import('./kubeconfig-source.js')).eksKubeConfig(
            options.cluster,
            where,
            token.token,
          ),
      };
    },
    invalidate: () => tokens.invalidate(),
  };
}
