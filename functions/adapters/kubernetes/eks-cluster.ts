import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';
import { RunnerMedicError } from '../../ports/errors.js';

export interface EksEndpoint {
  /** `https://….eks.amazonaws.com` */
  endpoint: string;
  /** Base64 PEM of the cluster CA, as DescribeCluster returns it. */
  caData: string;
}

/** The API endpoint and CA of an EKS cluster. */
export async function describeEksCluster(client: EKSClient, name: string): Promise<EksEndpoint> {
  const out = await client.send(new DescribeClusterCommand({ name }));
  const endpoint = out.cluster?.endpoint;
  const caData = out.cluster?.certificateAuthority?.data;
  if (!endpoint || !caData) {
    throw new RunnerMedicError(
      'bad-response',
      `EKS cluster ${name} has no endpoint or CA yet (status ${out.cluster?.status})`,
    );
  }
  return { endpoint, caData };
}
