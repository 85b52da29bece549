import { StreamPublisher } from '../adapters/bus/stream-publisher.js';
import type { LineWriter } from '../adapters/bus/stream-publisher.js';
import { createWebhookVerifier } from '../adapters/github/webhook-verifier.js';
import { DynamoDeliveryLedger } from '../adapters/store/dynamo-delivery-ledger.js';
import { createLogger, createMetrics } from '../config/observability.js';
import type { LocalSettings } from '../config/settings.js';
import { createDocumentClient } from '../config/webhook-wiring.js';
import { createGithubWebhookHandler } from '../handlers/github-webhook.js';
import type { ReceiveWebhookDeps } from '../ingress/receive-webhook.js';
import type { Clock } from '../ports/clock.js';
import { systemClock } from '../ports/clock.js';
import { startEmbeddedDynamo } from './embedded-dynamo.js';
import type { FunctionUrlHandler } from './function-url-server.js';
import { startFunctionUrlServer } from './function-url-server.js';

export interface LocalRuntime {
  url: string;
  close(): Promise<void>;
}

export interface LocalRuntimeOptions {
  settings: LocalSettings;
  /** Where the local event sink writes its JSON lines. */
  sink: LineWriter;
  clock?: Clock;
}

/** Everything `npm start` runs: the real handlers over HTTP, an embedded store, a local sink. */
export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const clock = options.clock ?? systemClock;
  const dynamo = await startEmbeddedDynamo();
  const ingress: ReceiveWebhookDeps = {
    verifier: createWebhookVerifier([options.settings.webhookSecret]),
    ledger: new DynamoDeliveryLedger(createDocumentClient(dynamo.clientConfig), dynamo.tableName),
    publisher: new StreamPublisher(options.sink, clock),
    clock,
    maxBodyBytes: 1024 * 1024,
    deliveryTtlSeconds: 8 * 24 * 3600,
  };
  const webhook = createGithubWebhookHandler({
    ingress: async () => ingress,
    logger: createLogger('github-webhook'),
    metrics: createMetrics('github-webhook'),
  });
  const server = await startFunctionUrlServer(
    { '/webhook': webhook as FunctionUrlHandler },
    options.settings.port,
    options.settings.host,
  );
  return {
    url: server.url,
    async close() {
      await server.close();
      await dynamo.close();
    },
  };
}
