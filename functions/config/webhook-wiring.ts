import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgePublisher } from '../adapters/bus/eventbridge-publisher.js';
import { StreamPublisher } from '../adapters/bus/stream-publisher.js';
import { createWebhookVerifier } from '../adapters/github/webhook-verifier.js';
import { createSecretReader, splitSecrets } from '../adapters/secrets/secret-reader.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import type { ReceiveWebhookDeps } from '../ingress/receive-webhook.js';
import type { SignatureVerifier } from '../ports/webhook.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { loadWebhookSettings } from './settings.js';
import type { WebhookSettings } from './settings.js';

export function createDocumentClient(config: DynamoDBClientConfig = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient(config);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}

export function createPublisher(
  settings: Pick<WebhookSettings, 'sink' | 'busName' | 'eventBridgeEndpoint'>,
  clock: Clock,
): EventPublisher {
  if (settings.sink === 'stdout') return new StreamPublisher(process.stdout, clock);
  const client = new EventBridgeClient(
    settings.eventBridgeEndpoint ? { endpoint: settings.eventBridgeEndpoint } : {},
  );
  return new EventBridgePublisher(client, { busName: settings.busName });
}

/**
 * Builds the ingress dependencies from the environment on first use (a bad configuration is a
 * logged 500, not an init crash), and re-reads the secret when its cache expires.
 */
export function ingressFromEnvironment(
  env: Record<string, string | undefined>,
  clock: Clock = systemClock,
): () => Promise<ReceiveWebhookDeps> {
  let base: Omit<ReceiveWebhookDeps, 'verifier'> | undefined;
  let readSecret: (() => Promise<string>) | undefined;
  let verifier: { secret: string; verifier: SignatureVerifier } | undefined;

  return async () => {
    if (!base || !readSecret) {
      const settings = loadWebhookSettings(env);
      readSecret = createSecretReader(
        settings.secret,
        { ssm: () => new SSMClient({}), secretsManager: () => new SecretsManagerClient({}) },
        clock,
        settings.secretCacheSeconds,
      );
      base = {
        ledger: new DynamoDeliveryLedger(
          createDocumentClient(
            settings.dynamoEndpoint ? { endpoint: settings.dynamoEndpoint } : {},
          ),
          settings.tableName,
        ),
        publisher: createPublisher(settings, clock),
        clock,
        maxBodyBytes: settings.maxBodyBytes,
        deliveryTtlSeconds: settings.deliveryTtlSeconds,
      };
    }
    const secret = await readSecret();
    if (verifier?.secret !== secret) {
      verifier = { secret, verifier: createWebhookVerifier(splitSecrets(secret)) };
    }
    return { ...base, verifier: verifier.verifier };
  };
}
