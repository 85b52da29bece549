import * as z from 'zod';

/**
 * The runner namespaces of a cluster: runner-medic lists and reads runners only there (namespaced
 * RBAC). Left out, it lists runners across all namespaces, which needs cluster-wide read.
 */
const namespaces = z
  .array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a Kubernetes namespace name'))
  .max(1000)
  .optional();

/** Where a kubeconfig document is kept in AWS: an SSM SecureString or a Secrets Manager secret. */
const kubeconfigSecretSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('ssm'), name: z.string().min(1) }),
  z.strictObject({ kind: z.literal('secrets-manager'), id: z.string().min(1) }),
]);

/** How runner-medic reaches one cluster, and where it looks there (one entry of CLUSTERS). */
const clusterAccessSchema = z.discriminatedUnion('kind', [
  /** A kubeconfig document given directly (local runs, tests). */
  z.strictObject({
    kind: z.literal('kubeconfig'),
    kubeconfig: z.string().min(1),
    context: z.string().optional(),
    namespaces,
  }),
  /** A kubeconfig document kept in SSM (SecureString) or Secrets Manager. */
  z.strictObject({
    kind: z.literal('kubeconfig-secret'),
    secret: kubeconfigSecretSchema,
    context: z.string().optional(),
    namespaces,
  }),
  /** EKS IAM auth: endpoint and CA from DescribeCluster, token from presigned STS. */
  z.strictObject({
    kind: z.literal('eks'),
    region: z.string().min(1),
    eksClusterName: z.string().optional(),
    namespaces,
  }),
]);

/** Every cluster runner-medic may act in, keyed by the `clusterName` its events carry. */
export const clustersSchema = z.record(z.string().min(1), clusterAccessSchema);

export type KubeconfigSecret = z.infer<typeof kubeconfigSecretSchema>;
export type ClusterAccess = z.infer<typeof clusterAccessSchema>;
