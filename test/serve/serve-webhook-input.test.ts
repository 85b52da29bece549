/**
 * Bad input on serve's webhook port, over real HTTP: every request is also given to the Lambda
 * Function URL's handler (functions/handlers/github-webhook.ts on dynalite, the IngressHarness),
 * and serve must answer what it answers (status and body), store nothing (every row of serve's
 * SQLite file, delivery ledger included, is the same after) and act on nothing (no engine run,
 * no change to the cluster). A good delivery at the end shows the store does change when it
 * should. The replica follows (another replica holds the Lease), as most replicas do: what it
 * accepts it records for the leader.
 * Also what only serve has: a path other than /webhook, and a body over the Function URL's 6 MiB.
 */
import { randomUUID } from 'node:crypto';
import { openSqliteStores } from '../../functions/adapters/store/sqlite-stores.js';
import { asAppDelivery, examplesFor } from '../helpers/webhook-examples.js';
import {
  IngressHarness,
  TEST_SECRET,
  functionUrlEvent,
  signBody,
} from '../helpers/ingress-harness.js';
import { sample, startServeOnTwin, storeRows, type ServeOnTwin } from './serve-twin-fixture.js';

interface Request {
  method?: string;
  path?: string;
  headers: Record<string, string>;
  body: string;
}

const queued = asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {});
const queuedBody = JSON.stringify(queued);
const withoutJobId = JSON.stringify({
  ...queued,
  workflow_job: { ...(queued.workflow_job as object), id: undefined, labels: 'not-a-list' },
});

/** A delivery as GitHub signs it; `change` edits the headers after signing. */
function delivery(
  event: string,
  body: string,
  options: { secret?: string; method?: string; change?: (h: Record<string, string>) => void } = {},
): Request {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/test',
    'x-github-event': event,
    'x-github-delivery': randomUUID(),
    'x-hub-signature-256': signBody(options.secret ?? TEST_SECRET, body),
  };
  options.change?.(headers);
  return { headers, body, ...(options.method ? { method: options.method } : {}) };
}

const badInputs: { name: string; status: number; request: () => Request }[] = [
  {
    name: 'a GET',
    status: 405,
    request: () => delivery('workflow_job', queuedBody, { method: 'GET' }),
  },
  {
    name: 'a PUT',
    status: 405,
    request: () => delivery('workflow_job', queuedBody, { method: 'PUT' }),
  },
  {
    name: 'a body over the 1 MiB limit',
    status: 413,
    request: () => delivery('workflow_job', 'x'.repeat(1024 * 1024 + 1)),
  },
  {
    name: 'no signature',
    status: 401,
    request: () =>
      delivery('workflow_job', queuedBody, { change: (h) => delete h['x-hub-signature-256'] }),
  },
  {
    name: 'a signature made with another secret',
    status: 401,
    request: () => delivery('workflow_job', queuedBody, { secret: 'wrong' }),
  },
  {
    name: 'a signature over a different body',
    status: 401,
    request: () => ({
      ...delivery('workflow_job', queuedBody),
      body: queuedBody.replace('queued', 'completed'),
    }),
  },
  {
    name: 'a malformed signature header',
    status: 401,
    request: () =>
      delivery('workflow_job', queuedBody, {
        change: (h) => (h['x-hub-signature-256'] = 'sha1=abc'),
      }),
  },
  {
    name: 'no X-GitHub-Event',
    status: 400,
    request: () =>
      delivery('workflow_job', queuedBody, { change: (h) => delete h['x-github-event'] }),
  },
  {
    name: 'no X-GitHub-Delivery',
    status: 400,
    request: () =>
      delivery('workflow_job', queuedBody, { change: (h) => delete h['x-github-delivery'] }),
  },
  {
    name: 'a delivery id with a slash',
    status: 400,
    request: () =>
      delivery('workflow_job', queuedBody, { change: (h) => (h['x-github-delivery'] = 'a/b') }),
  },
  {
    name: 'broken JSON, correctly signed',
    status: 400,
    request: () => delivery('workflow_job', '{"action": "queued",'),
  },
  {
    name: 'a payload missing the job id, with bad labels',
    status: 400,
    request: () => delivery('workflow_job', withoutJobId),
  },
  {
    name: 'a payload with no action',
    status: 400,
    request: () => delivery('workflow_job', '{"workflow_job":{}}'),
  },
  { name: 'a JSON array', status: 400, request: () => delivery('workflow_run', '[1,2,3]') },
  {
    name: 'an event runner-medic does not handle (push)',
    status: 202,
    request: () => delivery('push', '{"ref":"refs/heads/main"}'),
  },
  {
    name: 'an unknown event',
    status: 202,
    request: () => delivery('no_such_event', queuedBody),
  },
  {
    name: 'an action runner-medic does not handle',
    status: 202,
    request: () => delivery('workflow_job', JSON.stringify({ ...queued, action: 'renamed' })),
  },
  {
    name: 'a ping',
    status: 202,
    request: () => delivery('ping', '{"zen":"Keep it logically awesome.","hook_id":1}'),
  },
];

const lambda = new IngressHarness();
let serve: ServeOnTwin;

beforeAll(async () => {
  await lambda.start();
  serve = await startServeOnTwin({ leaseHeldBy: 'runner-medic-elsewhere' });
}, 60_000);

afterAll(async () => {
  await serve.stop();
  await lambda.stop();
});

async function post(request: Request): Promise<{ statusCode: number; body: unknown }> {
  const response = await fetch(`${serve.urls.webhookUrl}${request.path ?? '/webhook'}`, {
    method: request.method ?? 'POST',
    headers: request.headers,
    ...(request.method === 'GET' ? {} : { body: request.body }),
  });
  return { statusCode: response.status, body: JSON.parse(await response.text()) as unknown };
}

/** The same request as the Function URL hands it to the Lambda handler. */
async function toLambda(request: Request): Promise<{ statusCode: number; body: unknown }> {
  const event = await functionUrlEvent({
    event: '',
    body: request.body,
    method: request.method ?? 'POST',
  });
  event.headers = { ...request.headers };
  if (request.method === 'GET') event.body = '';
  return lambda.deliver(event);
}

/** What serve did besides answering: its store, its engine, its writes to the cluster. */
async function effects() {
  const metrics = await (await fetch(`${serve.urls.probeUrl}/metrics`)).text();
  return {
    store: storeRows(serve.sqlitePath),
    engineRuns: sample(metrics, 'EngineRun') ?? 0,
    clusterWrites: serve.server.audit.entries.filter(
      (e) => e.by === 'runner-medic' && e.resource !== 'leases.coordination.k8s.io',
    ).length,
  };
}

test('the replica follows: another replica holds the Lease', () => {
  expect(serve.runtime.status()).toEqual(
    expect.objectContaining({ leading: false, holder: 'runner-medic-elsewhere', storeOpen: true }),
  );
});

describe("bad input on serve's webhook port: the Function URL's answers, nothing stored, nothing done", () => {
  it.each(badInputs)('answers $status to $name', async ({ status, request }) => {
    const req = request();
    const before = await effects();
    const lambdaItems = (await lambda.storedItems()).length;

    const answer = await post(req);
    const lambdaAnswer = await toLambda(req);

    expect(answer.statusCode).toBe(status);
    expect(answer).toEqual(lambdaAnswer);
    expect(await effects()).toEqual(before);
    expect((await lambda.storedItems()).length).toBe(lambdaItems);
  });
});

describe('what only serve has', () => {
  it.each([
    ['a POST to another path', { path: '/hooks', ...delivery('workflow_job', queuedBody) }],
    ['a POST to the root', { path: '/', ...delivery('workflow_job', queuedBody) }],
    ['a GET of another path', { path: '/metrics', method: 'GET', headers: {}, body: '' }],
  ])('answers 404 to %s and stores nothing', async (_name, req: Request) => {
    const before = await effects();
    const answer = await post(req);
    expect(answer.statusCode).toBe(404);
    expect(answer.body).toEqual({ status: 'rejected', reason: `no route ${req.path ?? ''}` });
    expect(await effects()).toEqual(before);
  });

  it("answers 413 to a body over the Function URL's 6 MiB and stores nothing", async () => {
    const before = await effects();
    const answer = await post(delivery('workflow_job', 'x'.repeat(6 * 1024 * 1024 + 1)));
    expect(answer.statusCode).toBe(413);
    expect(answer.body).toEqual(expect.objectContaining({ status: 'rejected' }));
    expect(await effects()).toEqual(before);
  });
});

test('a good delivery is accepted as the Function URL accepts it, and recorded for the leader', async () => {
  const req = delivery('workflow_job', queuedBody);
  const before = await effects();
  const answer = await post(req);
  expect(answer).toEqual(await toLambda(req));
  expect(answer).toEqual({
    statusCode: 202,
    body: { status: 'accepted', deliveryId: req.headers['x-github-delivery'] },
  });
  const after = await effects();
  // The follower records; it does not run the engine nor touch the cluster.
  expect(after.engineRuns).toBe(before.engineRuns);
  expect(after.clusterWrites).toBe(before.clusterWrites);
  expect(after.store['deliveries']).toHaveLength((before.store['deliveries']?.length ?? 0) + 1);
  expect(JSON.stringify(after.store['deliveries'])).toContain(
    req.headers['x-github-delivery'] ?? '?',
  );
  expect(after.store['facts']?.length).toBeGreaterThan(before.store['facts']?.length ?? 0);
});

test('what the follower recorded is decided by the replica that leads next, on its wake poll', async () => {
  const { clock, server, runtime } = serve;
  const stores = openSqliteStores(serve.sqlitePath, clock);
  try {
    // The good delivery above left a wake-up for whoever leads, due a Lease duration later.
    const recorded = await stores.facts.dueWakes(clock.now() + 60_000, 10);
    expect(recorded.length).toBeGreaterThan(0);
    const wakeRuns = async () =>
      sample(
        await (await fetch(`${serve.urls.probeUrl}/metrics`)).text(),
        'EngineRun',
        'trigger="wake"',
      ) ?? 0;
    expect(await wakeRuns()).toBe(0);

    // The other replica releases the Lease (client-go's ReleaseOnCancel: no holder).
    server.api.modify('admin', 'leases', 'runner-medic', 'runner-medic', (lease) => {
      (lease.spec as { holderIdentity?: string | null }).holderIdentity = null;
    });
    const until = Math.max(...recorded.map((w) => w.at)) + 10_000;
    while (clock.now() < until) await clock.advance(1000);

    expect(runtime.status().leading).toBe(true);
    expect(await wakeRuns()).toBeGreaterThan(0);
    expect(await stores.facts.dueWakes(clock.now(), 10)).toEqual([]);
  } finally {
    stores.close();
  }
});
