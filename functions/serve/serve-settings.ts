/**
 * The settings of `runner-medic serve` beyond the engine's and the webhook's (config/settings.ts,
 * read by the same loadSettings): where it listens, which store, which cluster and namespaces its
 * informers watch, and the leader election Lease. Defaults are client-go's leader election
 * defaults as kube-controller-manager uses them (leaseDuration 15 s, renewDeadline 10 s,
 * retryPeriod 2 s: k8s.io/component-base/config/v1alpha1/defaults.go) and the Lambda
 * deployment's sweep cadence (serverless.yml `sweepRate: rate(1 minute)`).
 */
import * as z from 'zod';
import { problemLines } from '../domain/model/zod-problems.js';
import { ConfigError } from '../config/settings.js';

type Env = Record<string, string | undefined>;

const text = z
  .string()
  .optional()
  .transform((value) => (value && value.trim() !== '' ? value.trim() : undefined));
const seconds = (fallback: number) => z.coerce.number().positive().max(86_400).default(fallback);
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const namespaceName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const serveSchema = z
  .object({
    PORT: port(8080),
    PROBE_PORT: port(9090),
    HOST: z.string().min(1).default('0.0.0.0'),
    STORE: z.enum(['sqlite', 'dynamodb']).default('sqlite'),
    SQLITE_PATH: z.string().min(1).default('/data/runner-medic.db'),
    CLUSTER_NAME: z.string().min(1, 'the name audit events and metrics give this cluster'),
    RUNNER_NAMESPACES: z
      .string()
      .min(1, 'the namespaces of the runner scale sets, comma-separated')
      .transform((list) => list.split(',').map((n) => n.trim()))
      .pipe(z.array(z.string().regex(namespaceName, 'a Kubernetes namespace name')).min(1)),
    NODE_EVENTS_NAMESPACE: z.string().regex(namespaceName).default('default'),
    LEASE_NAME: z.string().regex(namespaceName).default('runner-medic'),
    POD_NAMESPACE: z.string().regex(namespaceName).default('runner-medic'),
    POD_NAME: text,
    LEASE_DURATION_SECONDS: seconds(15),
    RENEW_DEADLINE_SECONDS: seconds(10),
    RETRY_PERIOD_SECONDS: seconds(2),
    SWEEP_SECONDS: seconds(60),
    /** How often the leader looks for wake-ups another replica recorded in the store. */
    WAKE_POLL_SECONDS: seconds(5),
  })
  .refine((e) => e.RENEW_DEADLINE_SECONDS < e.LEASE_DURATION_SECONDS, {
    message: 'RENEW_DEADLINE_SECONDS must be below LEASE_DURATION_SECONDS',
    path: ['RENEW_DEADLINE_SECONDS'],
  })
  .refine((e) => e.RETRY_PERIOD_SECONDS < e.RENEW_DEADLINE_SECONDS, {
    message: 'RETRY_PERIOD_SECONDS must be below RENEW_DEADLINE_SECONDS',
    path: ['RETRY_PERIOD_SECONDS'],
  })
  .transform((e) => ({
    port: e.PORT,
    probePort: e.PROBE_PORT,
    host: e.HOST,
    store: e.STORE,
    sqlitePath: e.SQLITE_PATH,
    cluster: e.CLUSTER_NAME,
    runnerNamespaces: [...new Set(e.RUNNER_NAMESPACES)],
    nodeEventsNamespace: e.NODE_EVENTS_NAMESPACE,
    lease: {
      name: e.LEASE_NAME,
      namespace: e.POD_NAMESPACE,
      identity: e.POD_NAME,
      durationMs: e.LEASE_DURATION_SECONDS * 1000,
      renewDeadlineMs: e.RENEW_DEADLINE_SECONDS * 1000,
      retryPeriodMs: e.RETRY_PERIOD_SECONDS * 1000,
    },
    sweepMs: e.SWEEP_SECONDS * 1000,
    wakePollMs: e.WAKE_POLL_SECONDS * 1000,
  }));

export type ServeSettings = z.output<typeof serveSchema>;
export type LeaseSettings = ServeSettings['lease'];

/** serve's own settings; a ConfigError lists every problem as `VARIABLE: what is wrong`. */
export function loadServeSettings(env: Env): ServeSettings {
  const parsed = serveSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(problemLines(parsed.error));
  return parsed.data;
}
