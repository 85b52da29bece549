import { Octokit } from '@octokit/core';
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import type { RequestError } from './sim-fixture.js';
import { buildWorld, MINUTE, octokitFor, rejection, REPO, SCALE_SET } from './sim-fixture.js';

const [owner, repo] = REPO.split('/') as [string, string];
const ResilientOctokit = Octokit.plugin(restEndpointMethods, retry, throttling);
const ThrottledOctokit = Octokit.plugin(restEndpointMethods, throttling);

describe('GitHub twin: rate limits, injected errors and latency', () => {
  const world = buildWorld({
    name: 'ci',
    jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: MINUTE }],
  });
  const { sim, clock, installationId } = world;
  let baseUrl = '';
  beforeAll(async () => {
    baseUrl = await sim.start();
  });
  afterAll(async () => sim.stop());
  afterEach(() => sim.faults.clear());

  /** A throttle handler that records its arguments and declines to retry (a retry would sleep for real). */
  function recorder() {
    const calls: unknown[][] = [];
    const handler = (...args: unknown[]) => {
      calls.push(args);
      return false;
    };
    return Object.assign(handler, { calls });
  }

  function throttled(
    onRateLimit: ReturnType<typeof recorder>,
    onSecondaryRateLimit: ReturnType<typeof recorder>,
  ) {
    return new ResilientOctokit({
      baseUrl,
      auth: sim.issueInstallationToken(installationId),
      throttle: { onRateLimit, onSecondaryRateLimit },
      retry: { retryAfterBaseValue: 0 },
    });
  }

  it('sends x-ratelimit-* headers counting down an hourly budget in sim time, and dates responses in sim time', async () => {
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(installationId));
    const first = await medic.rest.actions.listWorkflowRunsForRepo({ owner, repo });
    const second = await medic.rest.actions.listWorkflowRunsForRepo({ owner, repo });
    expect(first.headers['x-ratelimit-limit']).toBe('5000');
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(
      Number(first.headers['x-ratelimit-remaining']) - 1,
    );
    expect(second.headers['x-ratelimit-resource']).toBe('core');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(clock.now() / 1000);
    expect(Number(first.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(
      clock.now() / 1000 + 3600,
    );
    expect(first.headers.date).toBe(new Date(clock.now()).toUTCString());
  });

  it('reports the budget on GET /rate_limit without spending it', async () => {
    const token = sim.issueInstallationToken(installationId);
    const medic = octokitFor(baseUrl, token);
    const first = await medic.request('GET /rate_limit');
    const second = await medic.request('GET /rate_limit');
    expect(first.data.resources.core).toMatchObject({
      limit: 5000,
      remaining: second.data.resources.core.remaining,
    });
    await medic.rest.actions.listWorkflowRunsForRepo({ owner, repo });
    const third = await medic.request('GET /rate_limit');
    expect(third.data.resources.core.remaining).toBe(second.data.resources.core.remaining - 1);
  });

  it('answers 403 with remaining 0 once the primary budget is spent, which plugin-throttling reports as a rate limit', async () => {
    const onRateLimit = recorder();
    const onSecondaryRateLimit = recorder();
    sim.exhaustRateLimit(installationId);
    const refused = await rejection(
      throttled(onRateLimit, onSecondaryRateLimit).rest.actions.listWorkflowRunsForRepo({
        owner,
        repo,
      }),
    );
    expect(refused.status).toBe(403);
    expect(refused.response?.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.message).toContain(
      `API rate limit exceeded for installation ID ${installationId}.`,
    );
    expect(onRateLimit.calls).toHaveLength(1);
    expect(onSecondaryRateLimit.calls).toHaveLength(0);
    await clock.advance(60 * MINUTE);
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(installationId));
    expect((await medic.rest.actions.listWorkflowRunsForRepo({ owner, repo })).status).toBe(200);
  });

  it('injects a primary limit as 429 on writes only, with x-ratelimit-reset in sim time', async () => {
    const onRateLimit = recorder();
    const onSecondaryRateLimit = recorder();
    sim.addFault({
      kind: 'primary-rate-limit',
      status: 429,
      resetAfterS: 120,
      method: 'POST',
      times: 1,
    });
    const octokit = new ThrottledOctokit({
      baseUrl,
      auth: sim.issueInstallationToken(installationId),
      throttle: { onRateLimit, onSecondaryRateLimit },
    });
    const { runId } = sim.triggerRun(REPO, 'ci');
    expect((await octokit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId })).status).toBe(
      200,
    );
    const refused = await rejection(
      octokit.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId }),
    );
    expect(refused.status).toBe(429);
    expect(refused.response?.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.response?.headers['x-ratelimit-reset'])).toBe(
      Math.ceil(clock.now() / 1000) + 120,
    );
    expect(onRateLimit.calls).toHaveLength(1);
    expect(sim.run(runId)?.status).toBe('queued');
  });

  it('injects a secondary limit as 429 with retry-after, seen by onSecondaryRateLimit', async () => {
    const onRateLimit = recorder();
    const onSecondaryRateLimit = recorder();
    sim.addFault({
      kind: 'secondary-rate-limit',
      status: 429,
      retryAfterS: 42,
      path: /\/actions\/runs$/,
      times: 1,
    });
    const octokit = new ThrottledOctokit({
      baseUrl,
      auth: sim.issueInstallationToken(installationId),
      throttle: { onRateLimit, onSecondaryRateLimit },
    });
    const refused = await rejection(octokit.rest.actions.listWorkflowRunsForRepo({ owner, repo }));
    expect(refused.status).toBe(429);
    expect(refused.message).toContain('secondary rate limit');
    expect(refused.response?.headers['retry-after']).toBe('42');
    expect(onSecondaryRateLimit.calls).toEqual([
      [42, expect.objectContaining({ method: 'GET' }), expect.anything(), 0],
    ]);
    expect(onRateLimit.calls).toHaveLength(0);
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(installationId));
    expect((await medic.rest.actions.listWorkflowRunsForRepo({ owner, repo })).status).toBe(200);
  });

  it('injects 5xx responses that plugin-retry rides out', async () => {
    sim.addFault({ kind: 'server-error', status: 502, times: 2, method: 'GET' });
    const octokit = throttled(recorder(), recorder());
    const before = sim.requests().length;
    const { status } = await octokit.rest.actions.listWorkflowRunsForRepo({ owner, repo });
    expect(status).toBe(200);
    expect(
      sim
        .requests()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([502, 502, 200]);
  });

  it('draws probabilistic faults from the seed: the same seed hits the same requests', async () => {
    const pattern = async (seed: number) => {
      const other = buildWorld({ name: 'ci', jobs: [] }, { seed, privateKey: sim.app.privateKey });
      const url = await other.sim.start();
      try {
        other.sim.addFault({ kind: 'server-error', status: 503, probability: 0.5 });
        const octokit = octokitFor(url, other.sim.issueUserToken());
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++)
          statuses.push(
            await octokit.rest.actions.listWorkflowRunsForRepo({ owner, repo }).then(
              (r) => r.status,
              (e: RequestError) => e.status,
            ),
          );
        return statuses.join(',');
      } finally {
        await other.sim.stop();
      }
    };
    const a = await pattern(11);
    expect(a).toContain('503');
    expect(a).toContain('200');
    expect(await pattern(11)).toBe(a);
  });

  it('holds a response for injected latency until the sim clock passes it, and applies the call at that sim time', async () => {
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(installationId));
    const { runId } = sim.triggerRun(REPO, 'ci');
    sim.addFault({ kind: 'latency', ms: 2000, method: 'POST', times: 1 });
    const sentAt = clock.now();
    let answered = false;
    const call = medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId }).then((r) => {
      answered = true;
      return r;
    });
    await sim.whenRequestsHeld(1);
    await clock.advance(1999);
    expect(answered).toBe(false);
    expect(sim.run(runId)?.status).toBe('queued');
    await clock.advance(1);
    expect((await call).status).toBe(202);
    expect(sim.heldRequests()).toBe(0);
    expect(sim.audit().at(-1)).toMatchObject({ verb: 'cancel', at: sentAt + 2000 });
  });
});
