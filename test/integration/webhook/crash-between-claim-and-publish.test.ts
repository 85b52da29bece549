import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../../../functions/adapters/bus/eventbridge-publisher.js';
import { createWebhookVerifier } from '../../../functions/adapters/github/webhook-verifier.js';
import { DynamoDeliveryLedger } from '../../../functions/adapters/store/dynamo-delivery-ledger.js';
import { createDocumentClient } from '../../../functions/config/webhook-wiring.js';
import { receiveWebhook } from '../../../functions/ingress/receive-webhook.js';
import type { ReceiveWebhookDeps } from '../../../functions/ingress/receive-webhook.js';
import { republishUnpublishedDeliveries } from '../../../functions/ingress/republish-unpublished.js';
import type { WebhookRequest } from '../../../functions/ingress/webhook-request.js';
import { startEmbeddedDynamo } from '../../../functions/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../../functions/local/embedded-dynamo.js';
import { EventBridgeSim } from '../../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../../sim/clock.js';
import { TEST_SECRET, signBody } from '../../helpers/ingress-harness.js';
import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';

const LEASE_SECONDS = 60;
const queued = asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {});

let dynamo: EmbeddedDynamo;
let eventBridgeEndpoint: string;
const eventBridge = new EventBridgeSim();
const clock = new SimClock(Date.parse('2026-03-01T12:00:00Z'));
let deps: ReceiveWebhookDeps;
let clients: { destroy(): void }[] = [];

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-crash');
  eventBridgeEndpoint = await eventBridge.start();
  const documents = createDocumentClient(dynamo.clientConfig);
  const events = new EventBridgeClient({
    endpoint: eventBridgeEndpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  clients = [documents, events];
  deps = {
    verifier: createWebhookVerifier([TEST_SECRET]),
    ledger: new DynamoDeliveryLedger(documents, dynamo.tableName),
    publisher: new EventBridgePublisher(events, {
      busName: 'runner-medic-test',
      sleep: async () => undefined,
    }),
    clock,
    maxBodyBytes: 1024 * 1024,
    deliveryTtlSeconds: 3600,
    claimLeaseSeconds: LEASE_SECONDS,
  };
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await eventBridge.stop();
  await dynamo.close();
});

function queuedDelivery(deliveryId: string): WebhookRequest {
  const body = JSON.stringify({ ...queued, test_tag: deliveryId });
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'workflow_job',
      'x-github-delivery': deliveryId,
      'x-hub-signature-256': signBody(TEST_SECRET, body),
    },
    body,
    isBase64Encoded: false,
  };
}

/**
 * Runs one webhook invocation in a child process wired from the environment (dynalite and the
 * EventBridge twin over loopback), waits until it reports the chosen point, and SIGKILLs it.
 */
async function killWebhookAt(point: 'after-claim', request: WebhookRequest) {
  const child = spawn(
    'node_modules/.bin/tsx',
    ['test/integration/webhook/crash/webhook-child.ts'],
    {
      env: {
        PATH: process.env.PATH,
        CRASH_AT: point,
        REQUEST: JSON.stringify(request),
        CLOCK_MS: String(clock.now()),
        TABLE_NAME: dynamo.tableName,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        EVENTBRIDGE_ENDPOINT: eventBridgeEndpoint,
        EVENT_BUS_NAME: 'runner-medic-test',
        GITHUB_WEBHOOK_SECRET: TEST_SECRET,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  const lines = createInterface({ input: child.stdout });
  const reached = await new Promise<string>((resolve) => {
    lines.on('line', (line) => resolve(line));
    child.on('exit', () => resolve(`exited before ${point}: ${stderr}`));
  });
  expect(reached).toBe(`at ${point}`);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

const publishedFor = (deliveryId: string) =>
  eventBridge.details().filter((d) => (d as { deliveryId: string }).deliveryId === deliveryId);

describe('a webhook process killed between claim and publish', () => {
  it('leaves the delivery pending; the sweep publishes it once, and a later redelivery is a duplicate', async () => {
    const deliveryId = randomUUID();
    const request = queuedDelivery(deliveryId);
    await killWebhookAt('after-claim', request);

    expect(publishedFor(deliveryId)).toHaveLength(0);
    expect(await deps.ledger.isClaimed(deliveryId, Math.floor(clock.now() / 1000))).toBe(true);

    // Within the lease the dead holder might still be alive: the sweep leaves it.
    await clock.advance(10_000);
    const early = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now(), {
      leaseSeconds: LEASE_SECONDS,
    });
    expect(early.published).toEqual([]);

    await clock.advance(LEASE_SECONDS * 1000);
    const swept = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now(), {
      leaseSeconds: LEASE_SECONDS,
    });
    expect(swept).toEqual({ published: [deliveryId], settled: [], failed: [] });
    expect(publishedFor(deliveryId)).toEqual([
      expect.objectContaining({ kind: 'job.queued', deliveryId }),
    ]);

    const redelivery = await receiveWebhook(request, deps);
    expect(redelivery.response.body.status).toBe('duplicate');
    const again = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now(), {
      leaseSeconds: LEASE_SECONDS,
    });
    expect(again.published).toEqual([]);
    expect(publishedFor(deliveryId)).toHaveLength(1);
  });

  it("accepts GitHub's redelivery of the delivery it lost, and publishes it once", async () => {
    const deliveryId = randomUUID();
    const request = queuedDelivery(deliveryId);
    await killWebhookAt('after-claim', request);

    await clock.advance((LEASE_SECONDS + 1) * 1000);
    const redelivery = await receiveWebhook(request, deps);

    expect(redelivery.response).toEqual({
      statusCode: 202,
      body: { status: 'accepted', deliveryId },
    });
    expect(publishedFor(deliveryId)).toHaveLength(1);
    const swept = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now(), {
      leaseSeconds: LEASE_SECONDS,
    });
    expect(swept.published).toEqual([]);
    expect(publishedFor(deliveryId)).toHaveLength(1);
  });
});
