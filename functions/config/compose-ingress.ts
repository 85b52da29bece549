/**
 * The composition of the github-webhook function: the ingress, its delivery ledger, the bus and
 * the secret reader, and nothing of the engine (no Kubernetes, GitHub API or EKS client).
 */
import { createWebhookVerifier } from '../adapters/github/webhook-verifier.js';
import { createSecretReader, splitSecrets } from '../adapters/secrets/secret-reader.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import type { ReceiveWebhookDeps } from '../ingress/receive-webhook.js';
import type { SignatureVerifier } from '../ports/webhook.js';
import { awsIngressClients, publisherFor, type IngressClients } from './compose-clients.js';
import type { WebhookSettings } from './settings.js';
import { loadSettings } from './settings.js';

/**
 * The ingress of the github-webhook function; the secret is re-read when its cache expires,
 * and the signature verifier rebuilt when it changed.
 */
export function composeIngress(
  settings: WebhookSettings,
  clients: IngressClients,
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
  env: Record<string, string | undefined>,
  clients: IngressClients = awsIngressClients(),
): () => Promise<ReceiveWebhookDeps> {
  let ingress: (() => Promise<ReceiveWebhookDeps>) | undefined;
  return async () => {
    ingress ??= composeIngress(loadSettings(env, 'webhook'), clients);
    return ingress();
  };
}
