import { Webhooks } from '@octokit/webhooks';
import { createAppAuth } from '@octokit/auth-app';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { isoSeconds } from '../../../sim/github/payloads/api-urls.js';
import { MINUTE, ORG, REPO, RestOctokit, SCALE_SET, buildWorld } from './sim-fixture.js';

const SECRET = 'It’s a Secret to Everybody';

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that answers with `status()` and keeps what it got. */
async function startReceiver(status: () => number = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers[key] = value;
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  return {
    url,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const summary = (r: Received) =>
  `${r.headers['x-github-event']}.${(JSON.parse(r.body) as { action: string }).action}`;

/** Every key path of a JSON value (array items merged), to compare shapes with GitHub's examples. */
function keyPaths(value: unknown, prefix = ''): Set<string> {
  const out = new Set<string>();
  if (Array.isArray(value)) {
    for (const item of value) for (const path of keyPaths(item, `${prefix}[]`)) out.add(path);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      out.add(`${prefix}.${key}`);
      for (const path of keyPaths(child, `${prefix}.${key}`)) out.add(path);
    }
  }
  return out;
}

interface ExampleGroup {
  name: string;
  examples: { action: string }[];
}
const examples = JSON.parse(
  readFileSync(
    createRequire(import.meta.url).resolve('@octokit/webhooks-examples/api.github.com/index.json'),
    'utf8',
  ),
) as ExampleGroup[];

function example(
  name: string,
  action: string,
  predicate: (e: Record<string, unknown>) => boolean = () => true,
) {
  const found = examples
    .find((group) => group.name === name)
    ?.examples.find((e) => e.action === action && predicate(e));
  if (!found) throw new Error(`no ${name}.${action} example`);
  return found;
}

describe('GitHub twin: webhook deliveries', () => {
  const workflow = { name: 'ci', jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: MINUTE }] };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let receiverStatus = 200;
  beforeAll(async () => {
    receiver = await startReceiver(() => receiverStatus);
  });
  afterAll(async () => receiver.close());
  beforeEach(() => {
    receiver.received.length = 0;
    receiverStatus = 200;
  });

  function world(knobs = {}) {
    return buildWorld(workflow, { webhook: { url: receiver.url, secret: SECRET }, knobs });
  }

  it('posts signed workflow_run and workflow_job events, in order, when the sim clock moves', async () => {
    const { sim, clock, startRunner } = world();
    sim.triggerRun(REPO, 'ci');
    expect(receiver.received).toHaveLength(0);
    await clock.advance(0);
    expect(receiver.received.map(summary)).toEqual([
      'workflow_run.requested',
      'workflow_job.queued',
    ]);
    startRunner();
    await clock.advance(MINUTE);
    expect(receiver.received.map(summary)).toEqual([
      'workflow_run.requested',
      'workflow_job.queued',
      'workflow_run.in_progress',
      'workflow_job.in_progress',
      'workflow_job.completed',
      'workflow_run.completed',
    ]);

    const webhooks = new Webhooks({ secret: SECRET });
    const handled: string[] = [];
    webhooks.on('workflow_job.completed', ({ id, payload }) => {
      handled.push(`${id}:${payload.workflow_job.conclusion}:${payload.workflow_job.runner_name}`);
    });
    for (const delivery of receiver.received) {
      const headers = delivery.headers;
      await webhooks.verifyAndReceive({
        id: headers['x-github-delivery'] ?? '',
        name: (headers['x-github-event'] ?? '') as 'workflow_job',
        payload: delivery.body,
        signature: headers['x-hub-signature-256'] ?? '',
      });
    }
    const completed = receiver.received[4];
    expect(handled).toEqual([
      `${completed?.headers['x-github-delivery']}:success:${SCALE_SET}-runner-1`,
    ]);
    expect(completed?.headers).toMatchObject({
      'x-github-event': 'workflow_job',
      'x-github-hook-id': String(sim.webhookHookId),
      'x-github-hook-installation-target-type': 'integration',
      'x-github-hook-installation-target-id': String(sim.app.appId),
      'content-type': 'application/json',
    });
    expect(completed?.headers['x-github-delivery']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(completed?.headers['user-agent']).toMatch(/^GitHub-Hookshot\/[0-9a-f]{7}$/);
    await expect(
      new Webhooks({ secret: 'wrong' }).verify(
        completed?.body ?? '',
        completed?.headers['x-hub-signature-256'] ?? '',
      ),
    ).resolves.toBe(false);
    expect(sim.deliveries().map((d) => d.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('shapes payloads like GitHub’s own examples, with sim-clock timestamps', async () => {
    const { sim, clock, startRunner, installationId } = world();
    const startedAt = clock.now();
    sim.triggerRun(REPO, 'ci');
    startRunner();
    await clock.advance(MINUTE);
    const bodies = receiver.received.map(
      (r) => JSON.parse(r.body) as Record<string, Record<string, unknown>>,
    );
    const [requested, queued, , inProgress, completed, runCompleted] = bodies;
    const withInstallation = (e: Record<string, unknown>) => 'installation' in e;
    const cases: [unknown, Record<string, unknown>][] = [
      [queued, example('workflow_job', 'queued', withInstallation)],
      [inProgress, example('workflow_job', 'in_progress', withInstallation)],
      [completed, example('workflow_job', 'completed')],
      [requested, example('workflow_run', 'requested')],
      [runCompleted, example('workflow_run', 'completed')],
    ];
    for (const [ours, theirs] of cases) {
      const missing = [...keyPaths(theirs)].filter((path) => !keyPaths(ours).has(path));
      expect(missing).toEqual([]);
    }
    expect(queued?.['installation']).toMatchObject({ id: installationId });
    expect(queued?.['organization']).toMatchObject({ login: ORG });
    expect(queued?.['repository']).toMatchObject({ full_name: REPO });
    expect(queued?.['workflow_job']).toMatchObject({
      status: 'queued',
      created_at: isoSeconds(startedAt),
      started_at: isoSeconds(startedAt),
      runner_name: null,
      runner_id: null,
      steps: [],
      labels: [SCALE_SET],
    });
    const job = completed?.['workflow_job'];
    expect(job?.['completed_at']).toBe(isoSeconds(startedAt + MINUTE));
    expect(String(job?.['check_run_url']).endsWith(`/check-runs/${String(job?.['id'])}`)).toBe(
      true,
    );
    expect(runCompleted?.['workflow_run']).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      run_attempt: 1,
    });
  });

  it('drops deliveries and redelivers them on request with the same delivery GUID', async () => {
    const { sim, clock } = world({ drop: 1 });
    sim.triggerRun(REPO, 'ci');
    await clock.advance(MINUTE);
    expect(receiver.received).toHaveLength(0);
    const dropped = sim.deliveries();
    expect(dropped.map((d) => d.dropped)).toEqual([true, true]);
    sim.redeliver(dropped[1]?.guid ?? '');
    await clock.advance(0);
    expect(receiver.received.map((r) => r.headers['x-github-delivery'])).toEqual([
      dropped[1]?.guid,
    ]);
    expect(sim.deliveries().at(-1)).toMatchObject({
      kind: 'redelivery',
      statusCode: 200,
      guid: dropped[1]?.guid,
    });
  });

  it('duplicates deliveries with the same GUID, after a delay', async () => {
    const { sim, clock } = world({ duplicate: 1, duplicateAfterMs: 5000 });
    sim.triggerRun(REPO, 'ci');
    await clock.advance(4999);
    expect(receiver.received.map(summary)).toEqual([
      'workflow_run.requested',
      'workflow_job.queued',
    ]);
    await clock.advance(1);
    const guids = receiver.received.map((r) => r.headers['x-github-delivery']);
    expect(guids).toHaveLength(4);
    expect(guids[2]).toBe(guids[0]);
    expect(guids[3]).toBe(guids[1]);
  });

  it('delays and reorders deliveries, deterministically for a seed', async () => {
    const play = async () => {
      receiver.received.length = 0;
      const { sim, clock, startRunner } = world({
        delayMs: 1000,
        reorder: 0.5,
        reorderWindowMs: 60_000,
      });
      sim.triggerRun(REPO, 'ci');
      startRunner();
      await clock.advance(999);
      const early = receiver.received.length;
      await clock.advance(5 * MINUTE);
      return {
        early,
        order: receiver.received.map(summary),
        created: sim.deliveries().map((d) => `${d.event}.${d.action}`),
      };
    };
    const first = await play();
    expect(first.early).toBe(0);
    expect([...first.order].sort()).toEqual([...first.created].sort());
    expect(first.order).not.toEqual(first.created);
    expect(await play()).toEqual(first);
  });

  it('records the receiver’s failure status and never retries on its own', async () => {
    receiverStatus = 503;
    const { sim, clock } = world();
    sim.triggerRun(REPO, 'ci');
    await clock.advance(24 * 60 * MINUTE);
    expect(
      sim
        .deliveries()
        .slice(0, 2)
        .map((d) => d.statusCode),
    ).toEqual([503, 503]);
    expect(sim.deliveries().filter((d) => d.kind !== 'first')).toHaveLength(0);
  });

  it('lists deliveries and redelivers one through the App API, as a webhook sweeper would', async () => {
    const { sim, clock } = world({ drop: 1 });
    const baseUrl = await sim.start();
    try {
      sim.triggerRun(REPO, 'ci');
      await clock.advance(0);
      const app = new RestOctokit({
        baseUrl,
        authStrategy: createAppAuth,
        auth: { appId: sim.app.appId, privateKey: sim.app.privateKey },
      });
      const { data: listed } = await app.request('GET /app/hook/deliveries', { per_page: 1 });
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        event: 'workflow_job',
        action: 'queued',
        status_code: 0,
        redelivery: false,
      });
      const { status } = await app.request('POST /app/hook/deliveries/{delivery_id}/attempts', {
        delivery_id: Number(listed[0]?.id ?? 0),
      });
      expect(status).toBe(202);
      await clock.advance(0);
      expect(receiver.received.map(summary)).toEqual(['workflow_job.queued']);
      expect(receiver.received[0]?.headers['x-github-delivery']).toBe(listed[0]?.guid);
    } finally {
      await sim.stop();
    }
  });

  it('refuses a webhook URL off the loopback interface', () => {
    expect(() =>
      buildWorld(workflow, { webhook: { url: 'https://example.com/hook', secret: SECRET } }),
    ).toThrow(/loopback/);
  });
});
