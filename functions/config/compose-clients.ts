/**
 * The clients both compositions build on (compose-ingress.ts, compose-engine.ts): the table,
 * the bus and the secret stores, and the bus publisher the settings choose. Production passes
 * AWS clients; tests, the scenarios and `npm start` pass loopback ones
 * (sandbox/local/loopback-clients.ts), so all of them run the same wiring.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgePublisher } from '../adapters/bus/eventbridge-publisher.js';
import { StreamPublisher } from '../adapters/bus/stream-publisher.js';
import type { LineWriter } from '../adapters/bus/stream-publisher.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { WebhookSettings } from './settings.js';

/** The clients of the github-webhook function, and how patiently they wait. */
export interface IngressClients {
  clock: Clock;
  /** A DynamoDB document client, at `endpoint` when the settings name one. */
  documents(endpoint: string | undefined): DynamoDBDocumentClient;
  eventBridge(endpoint: string | undefined): EventBridgeClient;
  ssm(): SSMClient;
  secretsManager(): SecretsManagerClient;
  /** Where EVENT_SINK=stdout writes its JSON lines. */
  stdout: LineWriter;
  /** How the bus publisher waits between its retries; absent: a real wait. */
  busSleep?: (ms: number) => Promise<void>;
}

export function createDocumentClient(config: DynamoDBClientConfig = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient(config);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** The AWS SDK clients of the github-webhook function, credentials from the Lambda role. */
export function awsIngressClients(clock: Clock = systemClock): IngressClients {
  return {
    clock,
    documents: (endpoint) => createDocumentClient(endpoint ? { endpoint } : {}),
    eventBridge: (endpoint) => new EventBridgeClient(endpoint ? { endpoint } : {}),
    ssm: () => new SSMClient({}),
    secretsManager: () => new SecretsManagerClient({}),
    stdout: process.stdout,
  };
}

/** The bus the settings name: EventBridge, or JSON lines on stdout. */
export function publisherFor(
  settings: Pick<WebhookSettings, 'sink' | 'busName' | 'eventBridgeEndpoint'>,
  clients: IngressClients,
): EventPublisher {
  if (settings.sink === 'stdout') return new StreamPublisher(clients.stdout, clients.clock);
  return new EventBridgePublisher(clients.eventBridge(settings.eventBridgeEndpoint), {
    busName: settings.busName,
    ...(clients.busSleep ? { sleep: clients.busSleep } : {}),
  });
}
