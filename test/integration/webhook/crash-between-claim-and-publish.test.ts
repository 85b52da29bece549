import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { composeIngress } from '../../../functions/config/compose-ingress.js';
import { loadSettings } from '../../../functions/config/settings.js';
import { receiveWebhook } from '../../../functions/ingress/receive-webhook.js';
import type { ReceiveWebhookDeps } from '../../../functions/ingress/receive-webhook.js';
import {
  DELIVERY_CLAIM_LEASE_SECONDS,
  WEBHOOK_TIMEOUT_SECONDS,
} from '../../../functions/ingress/delivery-lease.js';
import { republishUnpublishedDeliveries } from '../../../functions/ingress/republish-unpublished.js';
import type { WebhookRequest } from '../../../functions/ports/webhook.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import { loopbackClients } from '../../../sandbox/local/loopback-clients.js';
import { EventBridgeSim } from '../../../sim/aws/eventbridge-sim.js';
import { SimClock } from '../../../sim/clock.js';
import { TEST_SECRET, signBody } from '../../helpers/ingress-harness.js';
import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';

const queued = asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {});

let dynamo: EmbeddedDynamo;
let eventBridgeEndpoint: string;
const eventBridge = new EventBridgeSim();
const clock = new SimClock(Date.parse('2026-03-01T12:00:00Z'));
let deps: ReceiveWebhookDeps;

/** The webhook function's environment, the same in this process and in the killed one. */
const webhookEnv = () => ({
  TABLE_NAME: dynamo.tableName,
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  EVENTBRIDGE_ENDPOINT: eventBridgeEndpoint,
  EVENT_BUS_NAME: 'runner-medic-test',
  GITHUB_WEBHOOK_SECRET: TEST_SECRET,
});

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-crash');
  eventBridgeEndpoint = await eventBridge.start();
  const settings = loadSettings(webhookEnv(), 'webhook');
  deps = await composeIngress(settings, loopbackClients(clock, { eventBridgeAttempts: 3 }))();
});
afterAll(async () => {
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
        ...webhookEnv(),
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: tsx runs the script in a child node process, and the kill must
      // reach that one too, or it lives on holding this test's pipes open.
      detached: true,
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
  process.kill(-(child.pid ?? 0), 'SIGKILL');
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

    // Within the webhook's timeout the holder might still be alive: the sweep leaves it.
    await clock.advance((WEBHOOK_TIMEOUT_SECONDS - 1) * 1000);
    const early = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now());
    expect(early.published).toEqual([]);

    await clock.advance(DELIVERY_CLAIM_LEASE_SECONDS * 1000);
    const swept = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now());
    expect(swept).toEqual({ published: [deliveryId], settled: [], failed: [] });
    expect(publishedFor(deliveryId)).toEqual([
      expect.objectContaining({ kind: 'job.queued', deliveryId }),
    ]);

    const redelivery = await receiveWebhook(request, deps);
    expect(redelivery.response.body.status).toBe('duplicate');
    const again = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now());
    expect(again.published).toEqual([]);
    expect(publishedFor(deliveryId)).toHaveLength(1);
  });

  it("accepts GitHub's redelivery once the crashed invocation's timeout has passed, and publishes it once", async () => {
    const deliveryId = randomUUID();
    const request = queuedDelivery(deliveryId);
    await killWebhookAt('after-claim', request);

    // While the holder may still be running (Lambda stops it at its timeout), a redelivery waits.
    await clock.advance((WEBHOOK_TIMEOUT_SECONDS - 1) * 1000);
    const early = await receiveWebhook(request, deps);
    expect(early.response.body).toEqual({
      status: 'duplicate',
      deliveryId,
      reason: 'being processed by another invocation',
    });
    expect(publishedFor(deliveryId)).toHaveLength(0);

    // The lease is the timeout plus a clock-skew allowance, not a minute: a redelivery that
    // follows the failed one is taken, and GitHub is told it was accepted.
    await clock.advance((DELIVERY_CLAIM_LEASE_SECONDS - WEBHOOK_TIMEOUT_SECONDS + 1) * 1000);
    expect(DELIVERY_CLAIM_LEASE_SECONDS).toBeLessThan(2 * WEBHOOK_TIMEOUT_SECONDS);
    const redelivery = await receiveWebhook(request, deps);

    expect(redelivery.response).toEqual({
      statusCode: 202,
      body: { status: 'accepted', deliveryId },
    });
    expect(publishedFor(deliveryId)).toHaveLength(1);
    const swept = await republishUnpublishedDeliveries(deps.ledger, deps.publisher, clock.now());
    expect(swept.published).toEqual([]);
    expect(publishedFor(deliveryId)).toHaveLength(1);
  });
});
