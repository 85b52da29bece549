import { randomUUID } from 'node:crypto';
import { asAppDelivery, examplesFor } from '../helpers/webhook-examples.js';
import { signBody } from '../helpers/ingress-harness.js';
import { startNpmStart } from '../helpers/npm-start.js';
import type { StartedProcess } from '../helpers/npm-start.js';

const SECRET = 'e2e-secret';
let app: StartedProcess;

beforeAll(async () => {
  app = await startNpmStart({ GITHUB_WEBHOOK_SECRET: SECRET, SANDBOX: 'off' });
}, 60_000);
afterAll(() => app.stop());

async function post(body: string, headers: Record<string, string>) {
  const response = await fetch(`${app.url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('npm start serves the webhook over real HTTP', () => {
  it('answers /healthz', async () => {
    const response = await fetch(`${app.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('accepts a signed delivery, prints its observation, then answers duplicate', async () => {
    const body = JSON.stringify(
      asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {}),
    );
    const deliveryId = randomUUID();
    const headers = {
      'x-github-event': 'workflow_job',
      'x-github-delivery': deliveryId,
      'x-hub-signature-256': signBody(SECRET, body),
    };

    const first = await post(body, headers);
    const second = await post(body, headers);

    expect(first).toEqual({ status: 202, body: { status: 'accepted', deliveryId } });
    expect(second).toEqual({ status: 202, body: { status: 'duplicate', deliveryId } });
    const events = app
      .stdoutLines()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['detail-type'] === 'GitHub Job Queued');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ source: 'runner-medic', detail: { deliveryId } });
  });

  it('rejects a wrong signature with 401 and prints no event', async () => {
    const before = app.stdoutLines().filter((l) => l.includes('"detail-type"')).length;
    const result = await post('{"action":"queued"}', {
      'x-github-event': 'workflow_job',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signBody('not-the-secret', '{"action":"queued"}'),
    });
    expect(result.status).toBe(401);
    expect(app.stdoutLines().filter((l) => l.includes('"detail-type"'))).toHaveLength(before);
  });
});

describe('npm start plays the sandbox: runner-medic around the simulators, no network', () => {
  it('replays the Karpenter seed and reports it recovered', async () => {
    const sandbox = await startNpmStart({ SANDBOX_SPEED: '20000' });
    try {
      const stderr = await sandbox.stderrMatching(
        /runner-medic calls: [^\n]*\n[^\n]*\n[^\n]*→ \d+/,
      );
      expect(stderr).toMatch(/PASSED {2}seed-karpenter-mid-job {2}\(with runner-medic/);
      expect(stderr).toMatch(/runner-medic {2}github rerun-failed-jobs .* → 201/);
      expect(stderr).toMatch(/job build #2 completed .* \(success\)/);
    } finally {
      await sandbox.stop();
    }
  }, 120_000);
});
