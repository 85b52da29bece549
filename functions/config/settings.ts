import * as z from 'zod';
import { problemLines } from '../domain/model/zod-problems.js';
import { clustersSchema } from '../ports/cluster-access.js';
import { RunnerMedicError } from '../ports/errors.js';
import type { SecretSource } from '../ports/secret-source.js';

/**
 * Every environment variable runner-medic reads, validated once, by role (see the README's
 * table): `webhook` is the github-webhook function, `engine` the remediate and reconcile
 * functions (and the CLI), `local` is `npm start`.
 */
export class ConfigError extends RunnerMedicError {
  readonly problems: string[];

  constructor(problems: string[]) {
    super('config', `invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * The default of every variable that has one, by variable: the schemas below read them from
 * here, and README's Configuration table states them (test/unit/settings.test.ts holds the two
 * together).
 */
export const SETTING_DEFAULTS = {
  EVENT_SINK: 'eventbridge',
  EVENT_BUS_NAME: 'default',
  /** How long a container keeps a secret before reading it again. */
  SECRET_CACHE_SECONDS: 300,
  /** The largest webhook body accepted; GitHub's workflow events run far smaller. */
  WEBHOOK_MAX_BODY_BYTES: 1024 * 1024,
  /** How long a delivery id stays claimed: past GitHub's redelivery window, and a day more. */
  DELIVERY_TTL_SECONDS: 8 * 24 * 3600,
  CLUSTERS: '{}',
  GITHUB_API_URL: 'https://api.github.com',
  /** Runners per list page in the sweep (`limit`). */
  SWEEP_PAGE_SIZE: 500,
  CHECK_RUNS: 'on',
  PORT: 3000,
  HOST: '127.0.0.1',
  /** `npm start`'s webhook secret (no secret is assumed in AWS). */
  LOCAL_WEBHOOK_SECRET: 'runner-medic-local-secret',
  SANDBOX: 'on',
  /** The sandbox `npm start` plays: the second seed report (Karpenter consolidates a busy node). */
  SANDBOX_SCENARIO: 'test/scenarios/seed-karpenter-mid-job.yaml',
  SANDBOX_SPEED: 60,
} as const;

const D = SETTING_DEFAULTS;
/** A Lambda Function URL's request limit: no larger body can arrive at all. */
const LAMBDA_REQUEST_LIMIT = 6 * 1024 * 1024;

/** An optional variable; blank counts as unset. */
const text = z
  .string()
  .optional()
  .transform((value) => (value && value.trim() !== '' ? value.trim() : undefined));

const whole = () => z.coerce.number().int();

/**
 * A secret given as `NAME` (the value itself), `NAME_PARAMETER` (an SSM SecureString) or
 * `NAME_ARN` (a Secrets Manager secret): exactly one.
 */
const secretSource = (name: string) =>
  z.object({ value: text, parameter: text, arn: text }).transform((given, ctx): SecretSource => {
    const sources: SecretSource[] = [
      ...(given.value !== undefined ? [{ kind: 'env', value: given.value } as const] : []),
      ...(given.parameter !== undefined ? [{ kind: 'ssm', name: given.parameter } as const] : []),
      ...(given.arn !== undefined ? [{ kind: 'secrets-manager', id: given.arn } as const] : []),
    ];
    const [source, ...extra] = sources;
    if (source && extra.length === 0) return source;
    ctx.addIssue({
      code: 'custom',
      message: `set exactly one of ${name}, ${name}_PARAMETER or ${name}_ARN`,
    });
    return z.NEVER;
  });

/** The policy document: inline (`POLICY`), a file, an SSM parameter, or the default policy. */
const policySource = z
  .object({ inline: text, file: text, parameter: text })
  .transform((given, ctx) => {
    const sources = [
      ...(given.inline !== undefined ? [{ kind: 'inline', text: given.inline } as const] : []),
      ...(given.file !== undefined ? [{ kind: 'file', path: given.file } as const] : []),
      ...(given.parameter !== undefined ? [{ kind: 'ssm', name: given.parameter } as const] : []),
    ];
    if (sources.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'set at most one of POLICY, POLICY_FILE or POLICY_PARAMETER',
      });
      return z.NEVER;
    }
    return sources[0] ?? ({ kind: 'default' } as const);
  });

/** CLUSTERS: a JSON object of cluster name to access (ports/cluster-access.ts). */
const clusters = z
  .string()
  .default(D.CLUSTERS)
  .transform((json, ctx): unknown => {
    try {
      return JSON.parse(json);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not valid JSON' });
      return z.NEVER;
    }
  })
  .pipe(clustersSchema);

/** The store and the bus: every function writes one and publishes on the other. */
const storeAndBus = {
  TABLE_NAME: z.string().min(3, 'TABLE_NAME needs at least 3 characters'),
  DYNAMODB_ENDPOINT: text,
  EVENT_SINK: z.enum(['eventbridge', 'stdout']).default(D.EVENT_SINK),
  EVENT_BUS_NAME: z.string().min(1).default(D.EVENT_BUS_NAME),
  EVENTBRIDGE_ENDPOINT: text,
  SECRET_CACHE_SECONDS: whole().nonnegative().default(D.SECRET_CACHE_SECONDS),
};

const storeAndBusSettings = (e: z.output<z.ZodObject<typeof storeAndBus>>) => ({
  tableName: e.TABLE_NAME,
  dynamoEndpoint: e.DYNAMODB_ENDPOINT,
  sink: e.EVENT_SINK,
  busName: e.EVENT_BUS_NAME,
  eventBridgeEndpoint: e.EVENTBRIDGE_ENDPOINT,
  secretCacheSeconds: e.SECRET_CACHE_SECONDS,
});

const webhookSchema = z
  .object({
    ...storeAndBus,
    GITHUB_WEBHOOK_SECRET: secretSource('GITHUB_WEBHOOK_SECRET'),
    WEBHOOK_MAX_BODY_BYTES: whole()
      .positive()
      .max(LAMBDA_REQUEST_LIMIT)
      .default(D.WEBHOOK_MAX_BODY_BYTES),
    DELIVERY_TTL_SECONDS: whole().positive().default(D.DELIVERY_TTL_SECONDS),
  })
  .transform((e) => ({
    ...storeAndBusSettings(e),
    secret: e.GITHUB_WEBHOOK_SECRET,
    maxBodyBytes: e.WEBHOOK_MAX_BODY_BYTES,
    deliveryTtlSeconds: e.DELIVERY_TTL_SECONDS,
  }));

const engineSchema = z
  .object({
    ...storeAndBus,
    GITHUB_APP_CREDENTIALS: secretSource('GITHUB_APP_CREDENTIALS'),
    POLICY: policySource,
    CLUSTERS: clusters,
    GITHUB_API_URL: z.string().url().default(D.GITHUB_API_URL),
    DEFAULT_CLUSTER_NAME: text,
    WAKE_QUEUE_URL: text,
    SWEEP_PAGE_SIZE: whole().min(10).max(5000).default(D.SWEEP_PAGE_SIZE),
    CHECK_RUNS: z
      .string()
      .default(D.CHECK_RUNS)
      .transform((value) => value.trim().toLowerCase())
      .pipe(z.enum(['on', 'off'], { error: (issue) => `"on" or "off", not "${issue.input}"` })),
  })
  .transform((e) => ({
    ...storeAndBusSettings(e),
    githubApp: e.GITHUB_APP_CREDENTIALS,
    policy: e.POLICY,
    clusters: e.CLUSTERS,
    githubApiUrl: e.GITHUB_API_URL,
    /** The cluster name for events that carry none (Fluent Bit via CloudWatch Logs). */
    defaultCluster: e.DEFAULT_CLUSTER_NAME,
    /** SQS queue for delayed wake-ups; without it a grace period ends at the next sweep. */
    wakeQueueUrl: e.WAKE_QUEUE_URL,
    sweepPageSize: e.SWEEP_PAGE_SIZE,
    /** A `runner-medic` check run explains each action on its job. */
    checkRuns: e.CHECK_RUNS === 'on',
  }));

const localSchema = z
  .object({
    PORT: whole().min(0).max(65535).default(D.PORT),
    HOST: z.string().default(D.HOST),
    GITHUB_WEBHOOK_SECRET: z.string().min(1).default(D.LOCAL_WEBHOOK_SECRET),
    SANDBOX: z.enum(['on', 'off']).default(D.SANDBOX),
    SANDBOX_SCENARIO: z.string().min(1).default(D.SANDBOX_SCENARIO),
    SANDBOX_SPEED: z.coerce.number().positive().max(100_000).default(D.SANDBOX_SPEED),
  })
  .transform((e) => ({
    port: e.PORT,
    host: e.HOST,
    webhookSecret: e.GITHUB_WEBHOOK_SECRET,
    /** The scenario the sandbox plays, or null when SANDBOX=off. */
    sandbox: e.SANDBOX === 'on' ? { scenario: e.SANDBOX_SCENARIO, speed: e.SANDBOX_SPEED } : null,
  }));

const schemas = { webhook: webhookSchema, engine: engineSchema, local: localSchema };

export type Role = keyof typeof schemas;
export type WebhookSettings = z.output<typeof webhookSchema>;
export type EngineSettings = z.output<typeof engineSchema>;
export type LocalSettings = z.output<typeof localSchema>;
export type PolicySource = EngineSettings['policy'];
type Env = Record<string, string | undefined>;

const secretVariables = (env: Env, name: string) => ({
  value: env[name],
  parameter: env[`${name}_PARAMETER`],
  arn: env[`${name}_ARN`],
});

/** The environment as the schemas read it: a secret's or the policy's variables side by side. */
function grouped(env: Env): Record<string, unknown> {
  const secret = (name: string) => secretVariables(env, name);
  return {
    ...env,
    GITHUB_WEBHOOK_SECRET: secret('GITHUB_WEBHOOK_SECRET'),
    GITHUB_APP_CREDENTIALS: secret('GITHUB_APP_CREDENTIALS'),
    POLICY: { inline: env.POLICY, file: env.POLICY_FILE, parameter: env.POLICY_PARAMETER },
  };
}

/**
 * The settings of one role from the environment; a ConfigError lists every problem at once,
 * each as `VARIABLE: what is wrong` (`CLUSTERS.<name>.<key>` inside CLUSTERS).
 */
export function loadSettings(env: Env, role: 'webhook'): WebhookSettings;
export function loadSettings(env: Env, role: 'engine'): EngineSettings;
export function loadSettings(env: Env, role: 'local'): LocalSettings;
export function loadSettings(env: Env, role: Role): z.output<(typeof schemas)[Role]> {
  const parsed = schemas[role].safeParse(role === 'local' ? env : grouped(env));
  if (!parsed.success) throw new ConfigError(problemLines(parsed.error));
  return parsed.data;
}

/** Where one secret is read from, or the problem with how it is given. */
export function secretSourceOf(env: Env, name: string): SecretSource | string {
  const parsed = secretSource(name).safeParse(secretVariables(env, name));
  return parsed.success ? parsed.data : parsed.error.issues.map((i) => i.message).join('; ');
}
