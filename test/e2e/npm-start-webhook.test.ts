import { randomUUID } from 'node:crypto';
import { asAppDelivery, examplesFor } from '../helpers/webhook-examples.js';
import { signBody } from '../helpers/ingress-harness.js';
import { runNpmStart, startNpmStart } from '../helpers/npm-start.js';
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
  it('--once tells the story as it happens, sets ARC alone beside it, and exits 0 when recovered', async () => {
    const run = await runNpmStart(['--once'], { SANDBOX_SPEED: '100000' });

    expect(run.code).toBe(0);
    const lines = run.stderr.split('\n');
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    const rerun = at(
      /^\s+\d+\.\ds {2}medic {3}rerun-failed-jobs acme\/app run \d+ → succeeded {2}\[rule-3-rerun-killed-job\] {2}because /,
    );
    const secondAttempt = at(/job build #2 completed .* \(success\)/);
    const outcome = at(/^PASSED {2}seed-karpenter-mid-job {2}\(with runner-medic/);
    // runner-medic's re-run stands in the timeline where it happened: before the job's second
    // attempt and before the outcome, not after it.
    expect(rerun).toBeGreaterThan(-1);
    expect(secondAttempt).toBeGreaterThan(rerun);
    expect(outcome).toBeGreaterThan(secondAttempt);
    expect(run.stderr).toMatch(/summary: seed-karpenter-mid-job/);
    // GitHub concludes a SIGTERMed runner's job about 20 s after the loss (the twin's measured
    // default), and runner-medic re-runs it within a second of that.
    expect(run.stderr).toMatch(
      /build +failure #1, lost at 120\.1s, never moving again +success #2, lost at 120\.1s, moving again at 140\.\ds +over \d+s \(ARC alone never recovers\)/,
    );
    expect(run.stderr).toMatch(/runner-medic recovered every job the scenario expects/);
    expect(run.stderr).not.toMatch(/local runtime on/);
  }, 120_000);

  it('--once exits 1 when runner-medic does not meet the scenario', async () => {
    const run = await runNpmStart(['--once'], {
      SANDBOX_SPEED: '100000',
      SANDBOX_SCENARIO: 'test/e2e/fixtures/sandbox-unmet-expectation.yaml',
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/FAILED {2}sandbox-unmet-expectation/);
    expect(run.stderr).toMatch(/runner-medic did NOT meet the scenario/);
  }, 120_000);

  it('a crashed npm start fails its waiter at once, with what it printed', async () => {
    await expect(startNpmStart({ PORT: 'not-a-port' })).rejects.toThrow(
      /npm start exited \(code 1[\s\S]*PORT/,
    );
  }, 60_000);
});
