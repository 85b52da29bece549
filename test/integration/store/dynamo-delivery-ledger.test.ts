import { DynamoDeliveryLedger } from '../../../functions/adapters/store/dynamo-delivery-ledger.js';
import { createDocumentClient } from '../../../functions/config/webhook-wiring.js';
import type { GithubObservation } from '../../../functions/domain/observation.js';
import { startEmbeddedDynamo } from '../../../functions/local/embedded-dynamo.js';
import type { EmbeddedDynamo } from '../../../functions/local/embedded-dynamo.js';

let dynamo: EmbeddedDynamo;
let ledger: DynamoDeliveryLedger;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-ledger');
  ledger = new DynamoDeliveryLedger(createDocumentClient(dynamo.clientConfig), dynamo.tableName);
});
afterAll(() => dynamo.close());

const observation = { kind: 'run.completed' } as unknown as GithubObservation;

describe('DynamoDeliveryLedger on dynalite', () => {
  it('knows a claimed delivery until its claim expires or is released', async () => {
    expect(await ledger.isClaimed('d-1', 1_000)).toBe(false);
    await ledger.claim(
      { deliveryId: 'd-1', event: 'workflow_run', observation, expiresAt: 2_000 },
      1_000,
    );

    expect(await ledger.isClaimed('d-1', 1_500)).toBe(true);
    expect(await ledger.isClaimed('d-1', 2_001)).toBe(false);

    await ledger.release('d-1');
    expect(await ledger.isClaimed('d-1', 1_500)).toBe(false);
  });
});
