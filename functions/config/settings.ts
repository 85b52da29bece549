import type { SecretSource } from '../ports/secret-source.js';
import { z } from 'zod';

/** Every environment variable runner-medic reads, validated once; see the README's table. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const LAMBDA_REQUEST_LIMIT = 6 * 1024 * 1024;

/** An optional variable; blank counts as unset. */
export const optionalText = z
  .string()
  .optional()
  .transform((value) => (value && value.trim() !== '' ? value.trim() : undefined));

/** Every problem zod found, each with the variable (and key path) it is about. */
export function problemsOf(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => `${prefix}${issue.path.join('.')}: ${issue.message}`);
}

/**
 * A secret given as `NAME` (the value itself), `NAME_PARAMETER` (an SSM SecureString) or
 * `NAME_ARN` (a Secrets Manager secret): exactly one, else the problem to report.
 */
export function secretSourceFrom(
  env: Record<string, string | undefined>,
  name: string,
): SecretSource | string {
  const [value, parameter, arn] = ['', '_PARAMETER', '_ARN'].map((suffix) =>
    optionalText.parse(env[`${name}${suffix}`]),
  );
  const sources: SecretSource[] = [
    ...(value !== undefined ? [{ kind: 'env', value } as const] : []),
    ...(parameter !== undefined ? [{ kind: 'ssm', name: parameter } as const] : []),
    ...(arn !== undefined ? [{ kind: 'secrets-manager', id: arn } as const] : []),
  ];
  const [source, ...extra] = sources;
  return source && extra.length === 0
    ? source
    : `set exactly one of ${name}, ${name}_PARAMETER or ${name}_ARN`;
}

const webhookEnvSchema = z.object({
  TABLE_NAME: z.string().min(3, 'TABLE_NAME needs at least 3 characters'),
  DYNAMODB_ENDPOINT: optionalText,
  EVENT_SINK: z.enum(['eventbridge', 'stdout']).default('eventbridge'),
  EVENT_BUS_NAME: z.string().min(1).default('default'),
  EVENTBRIDGE_ENDPOINT: optionalText,
  WEBHOOK_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(LAMBDA_REQUEST_LIMIT)
    .default(1024 * 1024),
  DELIVERY_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 24 * 3600),
  SECRET_CACHE_SECONDS: z.coerce.number().int().nonnegative().default(300),
});

export interface WebhookSettings {
  secret: SecretSource;
  tableName: string;
  dynamoEndpoint: string | undefined;
  sink: 'eventbridge' | 'stdout';
  busName: string;
  eventBridgeEndpoint: string | undefined;
  maxBodyBytes: number;
  deliveryTtlSeconds: number;
  secretCacheSeconds: number;
}

export function loadWebhookSettings(env: Record<string, string | undefined>): WebhookSettings {
  const parsed = webhookEnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  const e = parsed.data;
  const secret = secretSourceFrom(env, 'GITHUB_WEBHOOK_SECRET');
  if (typeof secret === 'string') throw new ConfigError([secret]);
  return {
    secret,
    tableName: e.TABLE_NAME,
    dynamoEndpoint: e.DYNAMODB_ENDPOINT,
    sink: e.EVENT_SINK,
    busName: e.EVENT_BUS_NAME,
    eventBridgeEndpoint: e.EVENTBRIDGE_ENDPOINT,
    maxBodyBytes: e.WEBHOOK_MAX_BODY_BYTES,
    deliveryTtlSeconds: e.DELIVERY_TTL_SECONDS,
    secretCacheSeconds: e.SECRET_CACHE_SECONDS,
  };
}

const localEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  GITHUB_WEBHOOK_SECRET: z.string().min(1).default('runner-medic-local-secret'),
  SANDBOX: z.enum(['on', 'off']).default('on'),
  SANDBOX_SCENARIO: z.string().min(1).default('test/scenarios/seed-karpenter-mid-job.yaml'),
  SANDBOX_SPEED: z.coerce.number().positive().max(100_000).default(60),
});

export interface LocalSettings {
  port: number;
  host: string;
  webhookSecret: string;
  /** The scenario the sandbox plays, or null when SANDBOX=off. */
  sandbox: { scenario: string; speed: number } | null;
}

/** Settings of `npm start`: no cloud, no network beyond loopback. */
export function loadLocalSettings(env: Record<string, string | undefined>): LocalSettings {
  const parsed = localEnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  return {
    port: parsed.data.PORT,
    host: parsed.data.HOST,
    webhookSecret: parsed.data.GITHUB_WEBHOOK_SECRET,
    sandbox:
      parsed.data.SANDBOX === 'on'
        ? { scenario: parsed.data.SANDBOX_SCENARIO, speed: parsed.data.SANDBOX_SPEED }
        : null,
  };
}
