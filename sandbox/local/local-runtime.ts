import type { LineWriter } from '../../functions/adapters/bus/stream-publisher.js';
import { composeIngress } from '../../functions/config/compose-ingress.js';
import { createLogger, createMetrics } from '../../functions/config/observability.js';
import type { LocalSettings } from '../../functions/config/settings.js';
import { loadSettings } from '../../functions/config/settings.js';
import { createGithubWebhookHandler } from '../../functions/handlers/github-webhook.js';
import type { Clock } from '../../functions/ports/clock.js';
import { systemClock } from '../../functions/ports/clock.js';
import { startEmbeddedDynamo } from './embedded-dynamo.js';
import type { FunctionUrlHandler } from '../../functions/serve/function-url-server.js';
import { startFunctionUrlServer } from '../../functions/serve/function-url-server.js';
import { loopbackClients } from './loopback-clients.js';

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
  // The webhook function's own settings and wiring, on the embedded store and a local sink.
  const settings = loadSettings(
    {
      TABLE_NAME: dynamo.tableName,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      EVENT_SINK: 'stdout',
      GITHUB_WEBHOOK_SECRET: options.settings.webhookSecret,
    },
    'webhook',
  );
  const webhook = createGithubWebhookHandler({
    ingress: composeIngress(settings, loopbackClients(clock, { stdout: options.sink })),
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
