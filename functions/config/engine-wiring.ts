import { readFile } from 'node:fs/promises';
import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { SqsWakeScheduler } from '../adapters/bus/sqs-wake-scheduler.js';
import { checkRunPublisherFromEnvironment } from '../adapters/github/check-run-publisher.js';
import { OctokitGithubGateway } from '../adapters/github/github-gateway.js';
import { loadGithubAppCredentials } from '../adapters/github/github-app-credentials.js';
import { ClusterConnections } from '../adapters/kubernetes/cluster-connections.js';
import { createSecretReader } from '../adapters/secrets/secret-reader.js';
import { DynamoClusterSightings } from '../adapters/store/cluster-sightings.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import { DynamoFactsStore } from '../adapters/store/dynamo-facts-store.js';
import { DEFAULT_POLICY, parsePolicy } from '../domain/policy/policy.js';
import type { Policy } from '../domain/policy/policy.js';
import type { EngineDeps } from '../engine/run-engine.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { PolicySource } from './engine-settings.js';
import { loadEngineSettings } from './engine-settings.js';
import { ConfigError } from './settings.js';
import { createDocumentClient, createPublisher } from './webhook-wiring.js';

export interface EngineSetup {
  deps: Omit<EngineDeps, 'log' | 'metrics'>;
  /** The cluster name for events that carry none (Fluent Bit via CloudWatch Logs). */
  defaultCluster?: string;
}

/** Builds the engine for one invocation; `remainingTimeMs` bounds GitHub rate-limit waits. */
export type EngineProvider = (remainingTimeMs: () => number) => Promise<EngineSetup>;

/**
 * The engine from the environment: clients are built once per container, the remaining-time
 * budget is rebound per invocation, and the policy is re-read when its cache expires.
 */
export function engineFromEnvironment(
  env: Record<string, string | undefined>,
  clock: Clock = systemClock,
): EngineProvider {
  let shared: Promise<EngineSetup> | undefined;
  let remaining: () => number = () => 60_000;

  return async (remainingTimeMs) => {
    remaining = remainingTimeMs;
    shared ??= (async () => {
      const settings = loadEngineSettings(env);
      const secretClients = {
        ssm: () => new SSMClient({}),
        secretsManager: () => new SecretsManagerClient({}),
      };
      const app = await loadGithubAppCredentials(settings.githubApp, secretClients);
      const readPolicy = policyReader(
        settings.policy,
        secretClients,
        clock,
        settings.secretCacheSeconds,
      );
      const documents = createDocumentClient(
        settings.dynamoEndpoint ? { endpoint: settings.dynamoEndpoint } : {},
      );
      const githubApp = {
        baseUrl: settings.githubApiUrl,
        appId: app.appId,
        privateKey: app.privateKey,
        remainingTimeMs: () => remaining(),
      };
      const deps: EngineSetup['deps'] = {
        store: new DynamoFactsStore(documents, settings.tableName),
        deliveries: new DynamoDeliveryLedger(documents, settings.tableName),
        clusters: new ClusterConnections({
          clusters: settings.clusters,
          clock,
          secretClients,
          secretCacheSeconds: settings.secretCacheSeconds,
          eks: {
            client: (region) => new EKSClient({ region }),
            credentials: fromNodeProviderChain(),
          },
        }),
        bus: createPublisher(
          {
            sink: settings.sink,
            busName: settings.busName,
            eventBridgeEndpoint: settings.eventBridgeEndpoint,
          },
          clock,
        ),
        policy: readPolicy,
        clock,
        sweepPageSize: settings.sweepPageSize,
        ...(settings.wakeQueueUrl
          ? { wake: new SqsWakeScheduler(new SQSClient({}), settings.wakeQueueUrl, clock) }
          : {}),
        // One gateway per container: it caches installation tokens. The time budget is read live.
        github: new OctokitGithubGateway(githubApp),
        // An explanation on every job runner-medic touches, unless CHECK_RUNS=off.
        ...(checkRunPublisherFromEnvironment(env, githubApp) ?? {}),
        sightings: new DynamoClusterSightings(documents, settings.tableName),
      };
      return {
        deps,
        ...(settings.defaultCluster ? { defaultCluster: settings.defaultCluster } : {}),
      };
    })().catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
    return shared;
  };
}

/** Reads and validates the policy document; a bad document is a ConfigError naming the keys. */
export function policyReader(
  source: PolicySource,
  secretClients: { ssm: () => SSMClient; secretsManager: () => SecretsManagerClient },
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
