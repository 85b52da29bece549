import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { EKSClient } from '@aws-sdk/client-eks';
import type { KubeConfig } from '@kubernetes/client-node';
import { OctokitGithubGateway } from '../adapters/github/github-gateway.js';
import { OctokitFactory } from '../adapters/github/octokit-factory.js';
import { connectionFor } from '../adapters/kubernetes/cluster-connections.js';
import type { AwsCredentialsProvider } from '../adapters/kubernetes/eks-token.js';
import type { SecretClients } from '../adapters/secrets/secret-reader.js';
import { DynamoClusterSightings } from '../adapters/store/cluster-sightings.js';
import type { EngineSettings } from '../config/settings.js';
import { createDocumentClient } from '../config/compose-clients.js';
import type { Clock } from '../ports/clock.js';
import { checkConfiguration } from './configuration-checks.js';
import type { CheckResult } from './doctor-check.js';
import { failed, unreachable } from './doctor-check.js';
import type { ClusterSnapshot } from './cluster-checks.js';
import { checkClusterSnapshot, inspectCluster, scaleSetsOf } from './cluster-checks.js';
import { checkEvents } from './events-checks.js';
import type { QueuedJob } from './github-checks.js';
import {
  answeredByGithub,
  checkGithubApp,
  checkOrphanRegistrations,
  checkQueuedJobs,
  listQueuedJobs,
} from './github-checks.js';

export interface DoctorOptions {
  /** The functions' environment (with `--stage`, the stage's parameter names filled in). */
  env: Record<string, string | undefined>;
  clock: Clock;
  secretClients: Required<SecretClients>;
  eks?: { client: (region: string) => EKSClient; credentials: AwsCredentialsProvider };
  /** Queued longer than this is a finding. @default 15 */
  queuedMinutes?: number;
  /** Events checks: an exporter silent this long is a finding. @default 30 */
  exporterSilentMinutes?: number;
  /** Repositories whose queued jobs are checked; default: every repository of each installation. */
  repositories?: string[];
}

/** Runs every check, in the order of docs/doctor.md: configuration, GitHub, each cluster, events. */
export async function runDoctor(options: DoctorOptions): Promise<CheckResult[]> {
  const now = options.clock.now();
  const { checks, configuration } = await checkConfiguration(
    options.env,
    options.secretClients,
    options.clock,
  );
  const { settings, app } = configuration;

  // Clusters first: the GitHub checks compare registrations with the EphemeralRunners.
  const clusters = await inspectClusters(settings?.clusters ?? {}, options, now);

  if (!settings || !app) {
    checks.push(
      failed(
        'github',
        'Not checked: the settings or the App credentials are missing (see the configuration checks).',
        'Fix the configuration, then run the doctor again.',
      ),
    );
    checks.push(...clusters.checks);
    checks.push(...(await eventsChecks(options, settings, now)));
    return checks;
  }

  const snapshots = clusters.snapshots;
  const appOptions = {
    baseUrl: settings.githubApiUrl,
    appId: app.appId,
    privateKey: app.privateKey,
    remainingTimeMs: () => 60_000,
    retries: 0,
    rateLimitRetries: 0,
  };
  const octokits = new OctokitFactory(appOptions);
  const gateway = new OctokitGithubGateway({ ...appOptions, clock: options.clock });
  const github = await checkGithubApp({
    octokits,
    listDeliveries: (since) => gateway.listDeliveryAttempts(since),
    now,
    repositoryRunners: [...snapshots.values()].some((s) =>
      s.runners.some((er) => er.metadata.labels?.['actions.github.com/repository'] !== undefined),
    ),
  });
  checks.push(...github.checks);
  if (github.installations.length > 0) {
    checks.push(
      await checkOrphanRegistrations({
        octokits,
        installations: github.installations,
        scaleSets: new Set(
          [...snapshots.values()].flatMap(scaleSetsOf).map((s) => s.toLowerCase()),
        ),
        runnerNames: new Set(
          [...snapshots.values()].flatMap((s) => s.runners.map((er) => er.metadata.name)),
        ),
        clustersRead: Object.keys(settings.clusters).every((c) => snapshots.has(c)),
      }),
    );
  }
  checks.push(...clusters.checks);
  if (snapshots.size > 0)
    checks.push(
      ...(await queuedJobChecks(octokits, github.installations, snapshots, options, now)),
    );
  checks.push(...(await eventsChecks(options, settings, now)));
  return checks;
}

/** Each configured cluster read fresh (no cached kubeconfig secret or cluster description). */
async function inspectClusters(
  clusters: EngineSettings['clusters'],
  options: DoctorOptions,
  now: number,
): Promise<{ checks: CheckResult[]; snapshots: Map<string, ClusterSnapshot> }> {
  const checks: CheckResult[] = [];
  const snapshots = new Map<string, ClusterSnapshot>();
  for (const [name, access] of Object.entries(clusters)) {
    const connection = connectionFor(name, access, {
      ...options,
      secretCacheSeconds: 0,
      describeCacheSeconds: 0,
    });
    const kubeConfig = async (): Promise<KubeConfig> => (await connection.resolve()).kubeConfig();
    const inspected = await inspectCluster({
      cluster: name,
      kubeConfig,
      namespaces: access.namespaces,
      now,
    });
    checks.push(...inspected.checks);
    if (inspected.snapshot) {
      snapshots.set(name, inspected.snapshot);
      checks.push(...checkClusterSnapshot(name, inspected.snapshot, now));
    }
  }
  return { checks, snapshots };
}

/** Per cluster read: jobs queued for its scale sets longer than `queuedMinutes`. */
async function queuedJobChecks(
  octokits: OctokitFactory,
  installations: Parameters<typeof listQueuedJobs>[0]['installations'],
  snapshots: Map<string, ClusterSnapshot>,
  options: DoctorOptions,
  now: number,
): Promise<CheckResult[]> {
  let queued: QueuedJob[] | undefined;
  let problem: CheckResult | undefined;
  try {
    queued = await listQueuedJobs({ octokits, installations, repositories: options.repositories });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    problem = answeredByGithub(error)
      ? failed(
          'queued-jobs',
          `Cannot list queued jobs: ${message}.`,
          'Name the repositories to look at with --repo owner/name.',
        )
      : unreachable(
          'queued-jobs',
          `Cannot reach GitHub to list queued jobs: ${message}.`,
          'Check GITHUB_API_URL and the network path to GitHub.',
        );
  }
  return [...snapshots].map(([name, snapshot]) => {
    const id = `cluster.${name}.queued-jobs`;
    return queued
      ? checkQueuedJobs(id, scaleSetsOf(snapshot), queued, now, options.queuedMinutes ?? 15)
      : { ...(problem as CheckResult), id };
  });
}

/** The Events checks over the store the functions write (TABLE_NAME, DYNAMODB_ENDPOINT). */
async function eventsChecks(
  options: DoctorOptions,
  settings: EngineSettings | undefined,
  now: number,
): Promise<CheckResult[]> {
  const tableName = settings?.tableName ?? options.env.TABLE_NAME;
  const endpoint = settings?.dynamoEndpoint ?? options.env.DYNAMODB_ENDPOINT;
  const sightings = tableName
    ? new DynamoClusterSightings(createDocumentClient(storeClientConfig(endpoint)), tableName)
    : null;
  return checkEvents({
    sightings,
    configured: Object.keys(settings?.clusters ?? {}),
    now,
    silentMinutes: options.exporterSilentMinutes ?? 30,
  });
}

/** A loopback endpoint is a local DynamoDB (dynalite, the sandbox): it takes any credentials. */
export function storeClientConfig(endpoint: string | undefined): DynamoDBClientConfig {
  if (!endpoint) return {};
  const host = new URL(endpoint).hostname;
  return host === '127.0.0.1' || host === 'localhost'
    ? { endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : { endpoint };
}
