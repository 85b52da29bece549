import { z } from 'zod';
import type { SecretSource } from '../ports/secret-source.js';
import { ConfigError, optionalText as text, problemsOf, secretSourceFrom } from './settings.js';

/**
 * The runner namespaces of a cluster: runner-medic lists and reads runners only there (namespaced
 * RBAC). Left out, it lists runners across all namespaces, which needs a ClusterRole.
 */
const namespaces = z
  .array(z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a Kubernetes namespace name'))
  .max(1000)
  .optional();

const clusterAccessSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('kubeconfig'),
    kubeconfig: z.string().min(1),
    context: z.string().optional(),
    namespaces,
  }),
  z.strictObject({
    kind: z.literal('kubeconfig-secret'),
    secret: z.discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('ssm'), name: z.string().min(1) }),
      z.strictObject({ kind: z.literal('secrets-manager'), id: z.string().min(1) }),
    ]),
    context: z.string().optional(),
    namespaces,
  }),
  z.strictObject({
    kind: z.literal('eks'),
    region: z.string().min(1),
    eksClusterName: z.string().optional(),
    namespaces,
  }),
]);

const clustersSchema = z.record(z.string().min(1), clusterAccessSchema);

const engineEnvSchema = z.object({
  TABLE_NAME: z.string().min(3, 'TABLE_NAME needs at least 3 characters'),
  DYNAMODB_ENDPOINT: text,
  EVENT_SINK: z.enum(['eventbridge', 'stdout']).default('eventbridge'),
  EVENT_BUS_NAME: z.string().min(1).default('default'),
  EVENTBRIDGE_ENDPOINT: text,
  POLICY: text,
  POLICY_FILE: text,
  POLICY_PARAMETER: text,
  CLUSTERS: z.string().default('{}'),
  GITHUB_API_URL: z.string().url().default('https://api.github.com'),
  DEFAULT_CLUSTER_NAME: text,
  WAKE_QUEUE_URL: text,
  SECRET_CACHE_SECONDS: z.coerce.number().int().nonnegative().default(300),
  /** Runners per list page in the sweep (`limit`). */
  SWEEP_PAGE_SIZE: z.coerce.number().int().min(10).max(5000).default(500),
});

export type PolicySource =
  | { kind: 'inline'; text: string }
  | { kind: 'file'; path: string }
  | { kind: 'ssm'; name: string }
  | { kind: 'default' };

export interface EngineSettings {
  tableName: string;
  dynamoEndpoint: string | undefined;
  sink: 'eventbridge' | 'stdout';
  busName: string;
  eventBridgeEndpoint: string | undefined;
  policy: PolicySource;
  clusters: z.output<typeof clustersSchema>;
  githubApiUrl: string;
  githubApp: SecretSource;
  defaultCluster: string | undefined;
  /** SQS queue for delayed wake-ups; without it a grace period ends at the next sweep. */
  wakeQueueUrl: string | undefined;
  secretCacheSeconds: number;
  sweepPageSize: number;
}

/** The remediate and reconcile functions' settings, every problem reported at once. */
export function loadEngineSettings(env: Record<string, string | undefined>): EngineSettings {
  const parsed = engineEnvSchema.safeParse(env);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  let clusters: z.output<typeof clustersSchema> = {};
  try {
    const result = clustersSchema.safeParse(JSON.parse(env.CLUSTERS ?? '{}'));
    if (result.success) clusters = result.data;
    else problems.push(...problemsOf(result.error, 'CLUSTERS.'));
  } catch {
    problems.push('CLUSTERS: not valid JSON');
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const e = parsed.data;

  const policies = [
    e.POLICY && ({ kind: 'inline', text: e.POLICY } as const),
    e.POLICY_FILE && ({ kind: 'file', path: e.POLICY_FILE } as const),
    e.POLICY_PARAMETER && ({ kind: 'ssm', name: e.POLICY_PARAMETER } as const),
  ].filter((p): p is Exclude<PolicySource, { kind: 'default' }> => Boolean(p));
  if (policies.length > 1)
    problems.push('set at most one of POLICY, POLICY_FILE or POLICY_PARAMETER');

  const githubApp = secretSourceFrom(env, 'GITHUB_APP_CREDENTIALS');
  if (typeof githubApp === 'string') problems.push(githubApp);
  if (problems.length > 0 || typeof githubApp === 'string') throw new ConfigError(problems);

  return {
    tableName: e.TABLE_NAME,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    sink: e.EVENT_SINK,
    busName: e.EVENT_BUS_NAME,
    eventBridgeEndpoint: e.EVENTBRIDGE_ENDPOINT,
    policy: policies[0] ?? { kind: 'default' },
    clusters,
    githubApiUrl: e.GITHUB_API_URL,
    githubApp,
    defaultCluster: e.DEFAULT_CLUSTER_NAME,
    wakeQueueUrl: e.WAKE_QUEUE_URL,
    secretCacheSeconds: e.SECRET_CACHE_SECONDS,
    sweepPageSize: e.SWEEP_PAGE_SIZE,
  };
}
