/**
 * The one composition root: the ingress and the engine, built from settings and client
 * factories. Production passes AWS clients (`awsClients`); tests, the scenarios and `npm start`
 * pass loopback ones (functions/local/loopback-clients.ts), so all of them run this wiring.
 */
import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgePublisher } from '../adapters/bus/eventbridge-publisher.js';
import { SqsWakeScheduler } from '../adapters/bus/sqs-wake-scheduler.js';
import { StreamPublisher } from '../adapters/bus/stream-publisher.js';
import type { LineWriter } from '../adapters/bus/stream-publisher.js';
import { OctokitCheckRunPublisher } from '../adapters/github/check-run-publisher.js';
import { loadGithubAppCredentials } from '../adapters/github/github-app-credentials.js';
import { OctokitGithubGateway } from '../adapters/github/github-gateway.js';
import type { OctokitFactoryOptions } from '../adapters/github/octokit-factory.js';
import { createWebhookVerifier } from '../adapters/github/webhook-verifier.js';
import { ClusterConnections } from '../adapters/kubernetes/cluster-connections.js';
import type { AwsCredentialsProvider } from '../adapters/kubernetes/eks-token.js';
import { createSecretReader, splitSecrets } from '../adapters/secrets/secret-reader.js';
import { DynamoClusterSightings } from '../adapters/store/cluster-sightings.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import { DynamoFactsStore } from '../adapters/store/dynamo-facts-store.js';
import { DEFAULT_POLICY, parsePolicy } from '../domain/policy/policy.js';
import type { Policy } from '../domain/policy/policy.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import type { ReceiveWebhookDeps } from '../ingress/receive-webhook.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { SignatureVerifier } from '../ports/webhook.js';
import type { EngineSettings, PolicySource, WebhookSettings } from './settings.js';
import { ConfigError, loadSettings } from './settings.js';

type Env = Record<string, string | undefined>;

/** The clients the adapters are built on, and how patiently they wait. */
export interface ClientFactories {
  clock: Clock;
  /** A DynamoDB document client, at `endpoint` when the settings name one. */
  documents(endpoint: string | undefined): DynamoDBDocumentClient;
  eventBridge(endpoint: string | undefined): EventBridgeClient;
  ssm(): SSMClient;
  secretsManager(): SecretsManagerClient;
  sqs(): SQSClient;
  eks: { client: (region: string) => EKSClient; credentials: AwsCredentialsProvider };
  /** Where EVENT_SINK=stdout writes its JSON lines. */
  stdout: LineWriter;
  /** How the GitHub client spaces and retries its calls; absent: GitHub's advice. */
  githubPacing?: Pick<
    OctokitFactoryOptions,
    'writeSpacingMs' | 'retryBaseMs' | 'rateLimitSecondMs'
  >;
  /** How the bus publisher waits between its retries; absent: a real wait. */
  busSleep?: (ms: number) => Promise<void>;
}

export function createDocumentClient(config: DynamoDBClientConfig = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient(config);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** The AWS SDK clients of the deployed functions, credentials from the Lambda role. */
export function awsClients(clock: Clock = systemClock): ClientFactories {
  return {
    clock,
    documents: (endpoint) => createDocumentClient(endpoint ? { endpoint } : {}),
    eventBridge: (endpoint) => new EventBridgeClient(endpoint ? { endpoint } : {}),
    ssm: () => new SSMClient({}),
    secretsManager: () => new SecretsManagerClient({}),
    sqs: () => new SQSClient({}),
    eks: { client: (region) => new EKSClient({ region }), credentials: fromNodeProviderChain() },
    stdout: process.stdout,
  };
}

function publisherFor(
  settings: Pick<WebhookSettings, 'sink' | 'busName' | 'eventBridgeEndpoint'>,
  clients: ClientFactories,
): EventPublisher {
  if (settings.sink === 'stdout') return new StreamPublisher(clients.stdout, clients.clock);
  return new EventBridgePublisher(clients.eventBridge(settings.eventBridgeEndpoint), {
    busName: settings.busName,
    ...(clients.busSleep ? { sleep: clients.busSleep } : {}),
  });
}

/**
 * The ingress of the github-webhook function; the secret is re-read when its cache expires,
 * and the signature verifier rebuilt when it changed.
 */
export function composeIngress(
  settings: WebhookSettings,
  clients: ClientFactories,
): () => Promise<ReceiveWebhookDeps> {
  const readSecret = createSecretReader(
    settings.secret,
    clients,
    clients.clock,
    settings.secretCacheSeconds,
  );
  const base: Omit<ReceiveWebhookDeps, 'verifier'> = {
    ledger: new DynamoDeliveryLedger(
      clients.documents(settings.dynamoEndpoint),
      settings.tableName,
    ),
    publisher: publisherFor(settings, clients),
    clock: clients.clock,
    maxBodyBytes: settings.maxBodyBytes,
    deliveryTtlSeconds: settings.deliveryTtlSeconds,
  };
  let verifier: { secret: string; verifier: SignatureVerifier } | undefined;
  return async () => {
    const secret = await readSecret();
    if (verifier?.secret !== secret) {
      verifier = { secret, verifier: createWebhookVerifier(splitSecrets(secret)) };
    }
    return { ...base, verifier: verifier.verifier };
  };
}

/**
 * The ingress from the environment, built on first use: a bad configuration is a logged 500 of
 * that invocation, not a crash of the container.
 */
export function ingressFromEnvironment(
  env: Env,
  clients: ClientFactories = awsClients(),
): () => Promise<ReceiveWebhookDeps> {
  let ingress: (() => Promise<ReceiveWebhookDeps>) | undefined;
  return async () => {
    ingress ??= composeIngress(loadSettings(env, 'webhook'), clients);
    return ingress();
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
