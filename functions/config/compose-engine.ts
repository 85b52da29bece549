/**
 * The composition of the remediate and reconcile functions (and the CLI): the engine, built from
 * settings and client factories. The github-webhook function has its own (compose-ingress.ts).
 */
import { readFile } from 'node:fs/promises';
import { EKSClient } from '@aws-sdk/client-eks';
import { SQSClient } from '@aws-sdk/client-sqs';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { SqsWakeScheduler } from '../adapters/bus/sqs-wake-scheduler.js';
import { OctokitCheckRunPublisher } from '../adapters/github/check-run-publisher.js';
import { loadGithubAppCredentials } from '../adapters/github/github-app-credentials.js';
import { OctokitGithubGateway } from '../adapters/github/github-gateway.js';
import type { OctokitFactoryOptions } from '../adapters/github/octokit-factory.js';
import { ClusterConnections } from '../adapters/kubernetes/cluster-connections.js';
import type { AwsCredentialsProvider } from '../adapters/kubernetes/eks-token.js';
import { createSecretReader } from '../adapters/secrets/secret-reader.js';
import { DynamoClusterSightings } from '../adapters/store/cluster-sightings.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import { DynamoFactsStore } from '../adapters/store/dynamo-facts-store.js';
import { DynamoWatchCursors } from '../adapters/store/dynamo-watch-cursors.js';
import { DEFAULT_POLICY, parsePolicy } from '../domain/policy/policy.js';
import type { Policy } from '../domain/policy/policy.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import { awsIngressClients, publisherFor, type IngressClients } from './compose-clients.js';
import type { EngineSettings, PolicySource } from './settings.js';
import { ConfigError, loadSettings } from './settings.js';

type Env = Record<string, string | undefined>;

/** The clients of the engine: the webhook's, and the wake queue, EKS and GitHub's pacing. */
export interface ClientFactories extends IngressClients {
  sqs(): SQSClient;
  eks: { client: (region: string) => EKSClient; credentials: AwsCredentialsProvider };
  /** How the GitHub client spaces and retries its calls; absent: GitHub's advice. */
  githubPacing?: Pick<
    OctokitFactoryOptions,
    'writeSpacingMs' | 'retryBaseMs' | 'rateLimitSecondMs'
  >;
}

/** The AWS SDK clients of the deployed engine functions, credentials from the Lambda role. */
export function awsClients(clock: Clock = systemClock): ClientFactories {
  return {
    ...awsIngressClients(clock),
    sqs: () => new SQSClient({}),
    eks: { client: (region) => new EKSClient({ region }), credentials: fromNodeProviderChain() },
  };
}

interface EngineSetup {
  deps: Omit<EngineDeps, 'log' | 'metrics'>;
  /** The cluster name for events that carry none (Fluent Bit via CloudWatch Logs). */
  defaultCluster?: string;
}

/** Builds the engine for one invocation; `remainingTimeMs` bounds GitHub rate-limit waits. */
export type EngineProvider = (remainingTimeMs: () => number) => Promise<EngineSetup>;

/**
 * The engine of the remediate and reconcile functions (and the CLI). Clients are built once
 * per container, the remaining-time budget is rebound per invocation, and the policy is re-read
 * when its cache expires.
 */
export function composeEngine(settings: EngineSettings, clients: ClientFactories): EngineProvider {
  let shared: Promise<EngineSetup> | undefined;
  let remaining: () => number = () => 60_000;
  const build = async (): Promise<EngineSetup> => {
    const { clock } = clients;
    const app = await loadGithubAppCredentials(settings.githubApp, clients);
    const githubApp = {
      baseUrl: settings.githubApiUrl,
      appId: app.appId,
      privateKey: app.privateKey,
      remainingTimeMs: () => remaining(),
      ...clients.githubPacing,
    };
    const documents = clients.documents(settings.dynamoEndpoint);
    const deps: EngineSetup['deps'] = {
      store: new DynamoFactsStore(documents, settings.tableName),
      deliveries: new DynamoDeliveryLedger(documents, settings.tableName),
      clusters: new ClusterConnections({
        clusters: settings.clusters,
        clock,
        secretClients: clients,
        secretCacheSeconds: settings.secretCacheSeconds,
        eks: clients.eks,
      }),
      bus: publisherFor(settings, clients),
      policy: policyReader(settings.policy, clients, clock, settings.secretCacheSeconds),
      clock,
      sweepPageSize: settings.sweepPageSize,
      ...(settings.wakeQueueUrl
        ? { wake: new SqsWakeScheduler(clients.sqs(), settings.wakeQueueUrl, clock) }
        : {}),
      // One gateway per container: it caches installation tokens. The time budget is read live.
      github: new OctokitGithubGateway({ ...githubApp, clock }),
      // An explanation on every job runner-medic touches, unless CHECK_RUNS=off.
      ...(settings.checkRuns ? { checkRuns: new OctokitCheckRunPublisher(githubApp) } : {}),
      sightings: new DynamoClusterSightings(documents, settings.tableName),
      watchCursors: new DynamoWatchCursors(documents, settings.tableName),
    };
    return {
      deps,
      ...(settings.defaultCluster ? { defaultCluster: settings.defaultCluster } : {}),
    };
  };
  return async (remainingTimeMs) => {
    remaining = remainingTimeMs;
    shared ??= build().catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
    return shared;
  };
}

/** The engine from the environment, its settings read on first use (a ConfigError then). */
export function engineFromEnvironment(
  env: Env,
  clients: ClientFactories = awsClients(),
): EngineProvider {
  let engine: EngineProvider | undefined;
  return async (remainingTimeMs) => {
    engine ??= composeEngine(loadSettings(env, 'engine'), clients);
    return engine(remainingTimeMs);
  };
}

/** Reads and validates the policy document; a bad document is a ConfigError naming the keys. */
export function policyReader(
  source: PolicySource,
  secretClients: Pick<ClientFactories, 'ssm' | 'secretsManager'>,
  clock: Clock,
  cacheSeconds: number,
): () => Promise<Policy> {
  if (source.kind === 'default') return async () => DEFAULT_POLICY;
  const readText =
    source.kind === 'inline'
      ? async () => source.text
      : source.kind === 'file'
        ? () => readFile(source.path, 'utf8')
        : createSecretReader(source, secretClients, clock, cacheSeconds);
  return async () => {
    const result = parsePolicy(await readText());
    if (!result.ok) throw new ConfigError(result.errors);
    return result.value;
  };
}
