import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, completedJob, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

const RUNNER = `${SET}-x7k2p-runner-aaaaa`;
const NODE = 'ip-10-0-1-17';

/** One healthy runner running a job: its objects Running on a Ready node, registered and online. */
async function healthyRunner(harness: EngineHarness): Promise<number> {
  const { github, kube, clock } = harness;
  github.createOrg('acme');
  github.createRepo('acme/app');
  const installationId = github.createInstallation('acme');
  const scaleSetId = github.actions.registerScaleSet({ owner: 'acme', name: SET });
  const runnerId = github.actions.registerRunner(scaleSetId, RUNNER);
  github.actions.acquireJob(RUNNER);
  kube.api.create('admin', 'nodes', undefined, {
    metadata: { name: NODE, labels: {} },
    spec: { providerID: 'aws:///eu-west-1a/i-0000000000000017' },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const set = seedRunnerSet(harness);
  seedRunner(
    harness,
    set,
    RUNNER,
    {
      phase: 'Running',
      ready: true,
      runnerName: RUNNER,
      runnerId,
      jobRepositoryName: 'acme/app',
      workflowRunId: 8,
      jobDisplayName: 'build',
    },
    { withPod: true },
  );
  kube.api.modify(
    'kubelet',
    'pods',
    NS,
    RUNNER,
    (p) => void (p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }),
    { subresource: 'status' },
  );
  // The org's installation, as a webhook of an earlier job told the store.
  await harness.engine.store.recordJob(
    completedJob({
      jobId: 42,
      runId: 7,
      runnerId,
      runnerName: 'an-earlier-runner',
      installationId,
      createdAt: clock.now() - 600_000,
      startedAt: clock.now() - 500_000,
      completedAt: clock.now() - 400_000,
    }),
    clock.now(),
  );
  return installationId;
}

/** Every item of the table, raw (with its time to live), but the sweep's own place-keeping. */
async function facts(harness: EngineHarness): Promise<string[]> {
  const { dynamo, table } = harness.endpoints();
  const client = createDocumentClient({
    endpoint: dynamo,
    region: 'local',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const out: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: table, ExclusiveStartKey: start as never }),
    );
    for (const item of page.Items ?? [])
      if (item.type?.S !== 'cursor') out.push(JSON.stringify(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return out.sort();
}

describe('a healthy sweep writes only what changed', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('writes nothing for an unchanged runner, and reads nothing of an installation with 0 calls left', async () => {
    const installationId = await healthyRunner(harness);
    // The first sweeps learn the runner: it took a job, so it is recorded on its node, once.
    for (let i = 0; i < 3; i++) {
      await runEngine({ kind: 'sweep' }, harness.engine);
      await harness.clock.advance(60_000);
    }
    const before = await facts(harness);
    expect(before.some((i) => i.includes(RUNNER))).toBe(true);

    const githubFrom = harness.github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    // No item written again: every time to live is as the earlier sweeps left it.
    expect(await facts(harness)).toEqual(before);
    // The sweep's look at GitHub: one page of the org's runners (in its share of the hour).
    expect(
      harness.github
        .requests()
        .slice(githubFrom)
        .filter((r) => r.by === 'runner-medic')
        .map((r) => `${r.method} ${r.path}`),
    ).toContain('GET /orgs/acme/actions/runners');

    harness.github.exhaustRateLimit(installationId);
    await harness.clock.advance(60_000);
    const reads = (from: number) =>
      harness.github
        .requests()
        .slice(from)
        .filter((r) => r.by === 'runner-medic' && r.path !== '/rate_limit');
    const exhaustedFrom = harness.github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    // The first read learns the limit is spent: GitHub refuses it (the throttling plugin may try
    // it once more, as it does on a 403 whose reset has passed by its own clock).
    const first = reads(exhaustedFrom);
    expect(first.length).toBeLessThanOrEqual(2);
    expect(new Set(first.map((r) => `${r.path} ${r.status}`)).size).toBe(1);
    expect(first[0]?.status).toBe(403);
    await harness.clock.advance(60_000);
    const later = harness.github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    expect(reads(later)).toEqual([]);
  }, 180_000);
});
