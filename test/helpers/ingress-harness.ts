import { createHmac, randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import { composeIngress } from '../../functions/config/compose-ingress.js';
import { createLogger, createMetrics } from '../../functions/config/observability.js';
import { loadSettings } from '../../functions/config/settings.js';
import { createGithubWebhookHandler } from '../../functions/handlers/github-webhook.js';
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { localLambdaContext } from '../../functions/serve/lambda-context.js';
import type { EmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { loopbackClients } from '../../sandbox/local/loopback-clients.js';
import { EventBridgeSim } from '../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../sim/clock.js';

export const TEST_SECRET = 'It is a secret to everybody';

export interface Delivery {
  event: string;
  body: string;
  deliveryId?: string;
  secret?: string;
  base64?: boolean;
  method?: string;
  headers?: Record<string, string>;
}

/** GitHub's `X-Hub-Signature-256` value for a body. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** A Function URL event as AWS sends it for a signed GitHub delivery. */
export async function functionUrlEvent(delivery: Delivery): Promise<LambdaFunctionURLEvent> {
  const signature = signBody(delivery.secret ?? TEST_SECRET, delivery.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/test',
    'x-github-event': delivery.event,
    'x-github-delivery': delivery.deliveryId ?? randomUUID(),
    'x-hub-signature-256': signature,
    ...delivery.headers,
  };
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/',
    rawQueryString: '',
    headers,
    isBase64Encoded: delivery.base64 ?? false,
    body: delivery.base64 ? Buffer.from(delivery.body, 'utf8').toString('base64') : delivery.body,
    requestContext: {
      accountId: '123456789012',
      apiId: 'test',
      domainName: 'test.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'test',
      http: {
        method: delivery.method ?? 'POST',
        path: '/',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'GitHub-Hookshot/test',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date(0).toUTCString(),
      timeEpoch: 0,
    },
  };
}

/** A minute left, not 10 s: middy ends an invocation early by real time, and tests share busy cores. */
export const lambdaContext = localLambdaContext('runner-medic-test-github-webhook', 60_000);

export interface ParsedResult {
  statusCode: number;
  body: { status: string; deliveryId: string | null; reason?: string };
}

export function parseResult(result: LambdaFunctionURLResult): ParsedResult {
  if (typeof result === 'string') throw new Error('expected a structured Function URL result');
  return { statusCode: result.statusCode ?? 0, body: JSON.parse(result.body ?? '{}') };
}

/** The github-webhook handler as composed in AWS, on dynalite and a loopback EventBridge. */
export class IngressHarness {
  constructor(private readonly observability: { logger?: Logger; metrics?: Metrics } = {}) {}

  readonly clock = new SimClock(Date.parse('2026-03-01T12:00:00Z'));
  readonly eventBridge = new EventBridgeSim();
  private dynamo: EmbeddedDynamo | undefined;
  private handler: ReturnType<typeof createGithubWebhookHandler> | undefined;

  async start(): Promise<void> {
    this.dynamo = await startEmbeddedDynamo('runner-medic-test');
    const settings = loadSettings(
      {
        TABLE_NAME: this.dynamo.tableName,
        DYNAMODB_ENDPOINT: this.dynamo.endpoint,
        EVENTBRIDGE_ENDPOINT: await this.eventBridge.start(),
        EVENT_BUS_NAME: 'runner-medic-test',
        GITHUB_WEBHOOK_SECRET: TEST_SECRET,
        DELIVERY_TTL_SECONDS: '3600',
      },
      'webhook',
    );
    this.handler = createGithubWebhookHandler({
      ingress: composeIngress(settings, loopbackClients(this.clock)),
      logger: this.observability.logger ?? createLogger('github-webhook'),
      metrics: this.observability.metrics ?? createMetrics('github-webhook'),
    });
  }

  async stop(): Promise<void> {
    await this.eventBridge.stop();
    await this.dynamo?.close();
  }

  async deliver(delivery: Delivery | LambdaFunctionURLEvent): Promise<ParsedResult> {
    if (!this.handler) throw new Error('harness not started');
    const event = 'requestContext' in delivery ? delivery : await functionUrlEvent(delivery);
    return parseResult(await this.handler(event, lambdaContext));
  }

  async storedItems(): Promise<Record<string, unknown>[]> {
    if (!this.dynamo) throw new Error('harness not started');
    const client = createDocumentClient(this.dynamo.clientConfig);
    const result = await client.send(new ScanCommand({ TableName: this.dynamo.tableName }));
    client.destroy();
    return result.Items ?? [];
  }
}
