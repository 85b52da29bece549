/**
 * serve with `STORE=dynamodb`: the same in-cluster runtime keeps its facts, its delivery ledger
 * and its watch cursors in DynamoDB (dynalite here, over the real AWS SDK client), as the Lambda
 * deployment does, and writes no SQLite file.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { playServeSandbox } from '../../sandbox/serve-sandbox.js';

const SEED = 'test/scenarios/seed-karpenter-mid-job.yaml';

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startEmbeddedDynamo('runner-medic-serve');
});
afterAll(() => dynamo.close());

test('the Karpenter seed played through serve on DynamoDB: recovered, every fact in the table, no SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'serve-dynamodb-'));
  try {
    const result = await playServeSandbox({
      file: SEED,
      speed: null,
      write: () => undefined,
      dir,
      env: {
        STORE: 'dynamodb',
        TABLE_NAME: dynamo.tableName,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
      },
    });
    expect(result.outcome.passed).toBe(true);
    expect(result.recovered).toBe(true);
    expect(existsSync(join(dir, 'runner-medic.db'))).toBe(false);

    const client = new DynamoDBClient(dynamo.clientConfig);
    try {
      const items = (await client.send(new ScanCommand({ TableName: dynamo.tableName }))).Items;
      const kinds = new Set((items ?? []).map((i) => i.type?.S));
      // The webhook's deliveries, the jobs they told of, and the claimed actions with their audit.
      for (const kind of ['delivery', 'job', 'action']) expect(kinds.has(kind)).toBe(true);
      const actions = (items ?? []).filter((i) => i.type?.S === 'action');
      expect(actions.length).toBeGreaterThanOrEqual(result.replicas.length);
      expect(actions.every((a) => a.outcome?.S !== undefined)).toBe(true);
    } finally {
      client.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
