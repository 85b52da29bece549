import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { functionUrlEvent, lambdaContext, parseResult } from '../../helpers/ingress-harness.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import { EventBridgeSim } from '../../../sim/aws/eventbridge-sim.js';

const eventBridge = new EventBridgeSim();
let dynamo: EmbeddedDynamo;

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-exported');
  Object.assign(process.env, {
    GITHUB_WEBHOOK_SECRET: 'exported-secret',
    TABLE_NAME: dynamo.tableName,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    EVENT_BUS_NAME: 'runner-medic-exported',
    EVENTBRIDGE_ENDPOINT: await eventBridge.start(),
  });
});
afterAll(async () => {
  await eventBridge.stop();
  await dynamo.close();
});

describe('the exported github-webhook handler, configured from the environment', () => {
  it('verifies with GITHUB_WEBHOOK_SECRET and publishes to EVENT_BUS_NAME', async () => {
    const { handler } = await import('../../../functions/handlers/github-webhook.js');
    const body = JSON.stringify(asAppDelivery(examplesFor('workflow_job')[4] ?? {}));

    const accepted = parseResult(
      await handler(
        await functionUrlEvent({ event: 'workflow_job', body, secret: 'exported-secret' }),
        lambdaContext,
      ),
    );
    const rejected = parseResult(
      await handler(await functionUrlEvent({ event: 'workflow_job', body }), lambdaContext),
    );

    expect(accepted.statusCode).toBe(202);
    expect(rejected.statusCode).toBe(401);
    expect(eventBridge.entries).toHaveLength(1);
    expect(eventBridge.entries[0]?.EventBusName).toBe('runner-medic-exported');
  });
});
