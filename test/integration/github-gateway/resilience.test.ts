import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import {
  GithubRateLimitedError,
  GithubRequestError,
} from '../../../functions/adapters/github/github-errors.js';
import { OctokitGithubGateway } from '../../../functions/adapters/github/github-gateway.js';
import { GithubUnavailableError } from '../../../functions/ports/github-gateway.js';
import { SimClock } from '../../../sim/clock.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { Budget, gatewayFor, quietLog, served } from './gateway-fixture.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const workflow = {
  name: 'ci',
  jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 10 * MINUTE }],
};

describe('GithubGateway under 5xx, rate limits and network failures', () => {
  // Started at the wall clock: plugin-throttling reads `x-ratelimit-reset` against Date.now().
  const world = buildWorld(workflow, { clock: new SimClock(Date.now()) });
  const { sim, clock, installationId } = world;
  const ref = { repo: REPO, installationId };
  const budget = new Budget();
  let gateway: OctokitGithubGateway;
  let runId = 0;
  const runPath = () => `/repos/${REPO}/actions/runs/${runId}`;
  beforeAll(async () => {
    await sim.start();
    gateway = gatewayFor(sim, budget, { clock });
    runId = sim.triggerRun(REPO, 'ci').runId;
    await gateway.getRun(ref, runId); // the installation token, so counts below are API calls only
  });
  afterEach(() => {
    sim.faults.clear();
    budget.ms = 60_000;
  });
  afterAll(() => sim.stop());

  it('retries a 5xx and returns the answer that follows', async () => {
    sim.addFault({ kind: 'server-error', status: 502, times: 2, path: runPath() });
    const from = sim.requests().length;
    expect(await gateway.getRun(ref, runId)).toMatchObject({ runId, status: 'queued' });
    expect(served(sim, from)).toEqual([
      `GET ${runPath()} 502`,
      `GET ${runPath()} 502`,
      `GET ${runPath()} 200`,
    ]);
  });

  it('throws GithubUnavailableError once 5xx outlasts the three retries', async () => {
    sim.addFault({ kind: 'server-error', status: 503, path: `${runPath()}/jobs` });
    const from = sim.requests().length;
    const error = await rejection(gateway.listJobs(ref, runId));
    expect(error).toBeInstanceOf(GithubUnavailableError);
    expect(error).not.toBeInstanceOf(GithubRateLimitedError);
    expect(String(error)).toContain('503 Service Unavailable');
    expect(served(sim, from)).toEqual(Array(4).fill(`GET ${runPath()}/jobs 503`));
  });

  it('retries a failed token call only with its caller, and keeps retrying later calls', async () => {
    const fresh = gatewayFor(sim, budget, { clock });
    const tokenPath = `/app/installations/${installationId}/access_tokens`;
    sim.addFault({ kind: 'server-error', status: 502, times: 1, path: tokenPath });
    const from = sim.requests().length;
    expect((await fresh.getRun(ref, runId))?.runId).toBe(runId);
    expect(served(sim, from, true)).toEqual([
      `POST ${tokenPath} 502`,
      `POST ${tokenPath} 201`,
      `GET ${runPath()} 200`,
    ]);
    sim.addFault({ kind: 'server-error', status: 502, times: 1, path: runPath() });
    const later = sim.requests().length;
    expect((await fresh.getRun(ref, runId))?.runId).toBe(runId);
    expect(served(sim, later)).toEqual([`GET ${runPath()} 502`, `GET ${runPath()} 200`]);
  });

  it('retries each page of a list on its own, even after a failed token call', async () => {
    const fresh = gatewayFor(sim, budget, { clock });
    const tokenPath = `/app/installations/${installationId}/access_tokens`;
    sim.addFault({ kind: 'server-error', status: 502, times: 1, path: tokenPath });
    expect((await fresh.getRun(ref, runId))?.runId).toBe(runId);
    sim.addFault({ kind: 'server-error', status: 502, times: 1, path: `${runPath()}/jobs` });
    const from = sim.requests().length;
    expect((await fresh.listJobs(ref, runId)).map((job) => job.name)).toEqual(['build']);
    expect(served(sim, from)).toEqual([`GET ${runPath()}/jobs 502`, `GET ${runPath()}/jobs 200`]);
  });

  it('does not retry a 5xx when the back-off would not leave the 5 s reserve', async () => {
    budget.ms = 5_000;
    sim.addFault({ kind: 'server-error', status: 500, times: 1, path: runPath() });
    const from = sim.requests().length;
    expect(await rejection(gateway.getRun(ref, runId))).toBeInstanceOf(GithubUnavailableError);
    expect(served(sim, from)).toEqual([`GET ${runPath()} 500`]);
    budget.ms = 5_001;
    sim.addFault({ kind: 'server-error', status: 500, times: 1, path: runPath() });
    expect((await gateway.getRun(ref, runId))?.runId).toBe(runId);
  });

  it('sends no cancel or re-run the run no longer wants, and never retries a 422', async () => {
    const finished = sim.triggerRun(REPO, 'ci').runId;
    sim.cancelRun(finished, { force: true });
    const from = sim.requests().length;
    expect((await gateway.cancelRun(ref, { runId: finished, runAttempt: 1 })).result).toBe(
      'conflict',
    );
    expect(served(sim, from)).toEqual([`GET /repos/${REPO}/actions/runs/${finished} 200`]);

    const live = sim.triggerRun(REPO, 'ci');
    const runner = world.startRunner();
    const afterCancel = sim.requests().length;
    expect(
      (await gateway.rerunJob(ref, live.jobIds[0] ?? 0, { runId: live.runId, runAttempt: 1 }))
        .result,
    ).toBe('already-running');
    expect(
      (await gateway.deleteRunner({ org: 'acme' }, installationId, runner.runnerId)).result,
    ).toBe('busy');
    expect(
      served(sim, afterCancel).map((line) =>
        line
          .split(' ')
          .slice(0, 1)
          .concat(line.split(' ').at(-1) ?? ''),
      ),
    ).toEqual([
      ['GET', '200'],
      ['DELETE', '422'],
    ]);
  });

  it('fails with GithubRateLimitedError, without waiting, when a secondary limit’s retry-after exceeds the time left', async () => {
    budget.ms = 30_000;
    for (const status of [403, 429] as const) {
      sim.addFault({ kind: 'secondary-rate-limit', status, retryAfterS: 42, times: 1 });
      const from = sim.requests().length;
      const error = await rejection(gateway.cancelRun(ref, { runId, runAttempt: 1 }));
      expect(error).toBeInstanceOf(GithubRateLimitedError);
      expect(error).toBeInstanceOf(GithubUnavailableError);
      expect(error).toMatchObject({ retryAfterMs: 42_000 });
      expect(String(error)).toContain('secondary rate limit');
      // The attempt check before the cancel is the call that meets the limit; no POST follows.
      expect(served(sim, from)).toEqual([`GET ${runPath()} ${status}`]);
    }
    expect(sim.audit().filter((e) => e.target.endsWith(`/runs/${runId}`))).toEqual([]);
  });

  it('waits out a secondary limit that fits the time left, and the retried call succeeds', async () => {
    sim.addFault({ kind: 'secondary-rate-limit', retryAfterS: 2, times: 1, method: 'GET' });
    const from = sim.requests().length;
    expect((await gateway.getJob(ref, sim.jobs(runId)[0]?.id ?? 0))?.runId).toBe(runId);
    expect(served(sim, from).map((line) => line.split(' ').at(-1))).toEqual(['403', '200']);
  });

  it('judges the wait against the remaining time minus a 5 s reserve, to the millisecond', async () => {
    const attempt = async (ms: number) => {
      budget.ms = ms;
      sim.addFault({ kind: 'secondary-rate-limit', retryAfterS: 10, times: 1, path: runPath() });
      try {
        return (await gateway.getRun(ref, runId))?.runId === runId ? 'retried' : 'wrong run';
      } catch (error) {
        return error instanceof GithubRateLimitedError ? 'gave up' : String(error);
      }
    };
    expect(await attempt(15_000)).toBe('retried');
    expect(await attempt(14_999)).toBe('gave up');
  });

  it('waits out a limit at most once per request', async () => {
    sim.addFault({ kind: 'secondary-rate-limit', retryAfterS: 1, times: 2, path: runPath() });
    const from = sim.requests().length;
    expect(await rejection(gateway.getRun(ref, runId))).toBeInstanceOf(GithubRateLimitedError);
    expect(served(sim, from).map((line) => line.split(' ').at(-1))).toEqual(['403', '403']);
  });

  it('waits for a spent primary limit that resets in time, and gives up on one that resets in an hour', async () => {
    sim.addFault({ kind: 'primary-rate-limit', resetAfterS: 1, times: 1, path: runPath() });
    const from = sim.requests().length;
    expect((await gateway.getRun(ref, runId))?.runId).toBe(runId);
    expect(served(sim, from).map((line) => line.split(' ').at(-1))).toEqual(['403', '200']);

    sim.exhaustRateLimit(installationId);
    const spent = await rejection(gateway.rerunFailedJobs(ref, { runId, runAttempt: 1 }));
    expect(spent).toBeInstanceOf(GithubRateLimitedError);
    expect(String(spent)).toContain(
      `API rate limit exceeded for installation ID ${installationId}`,
    );
    const retryAfterMs = spent instanceof GithubRateLimitedError ? spent.retryAfterMs : null;
    expect(retryAfterMs).toBeGreaterThan(3_590_000);
    expect(retryAfterMs).toBeLessThanOrEqual(3_601_000);
    await clock.advance(60 * MINUTE);
    expect((await gateway.getRun(ref, runId))?.runId).toBe(runId);
  });

  it('spaces mutating calls by writeSpacingMs', async () => {
    const spaced = gatewayFor(sim, budget, { clock, writeSpacingMs: 120 });
    await spaced.getRun(ref, runId);
    const runs = [sim.triggerRun(REPO, 'ci').runId, sim.triggerRun(REPO, 'ci').runId];
    const writesFrom = Date.now();
    for (const id of runs) {
      expect(await spaced.cancelRun(ref, { runId: id, runAttempt: 1 })).toEqual({ result: 'done' });
    }
    expect(Date.now() - writesFrom).toBeGreaterThanOrEqual(115);
  });

  it('aborts an exchange that hangs past the request timeout and retries it', async () => {
    const impatient = gatewayFor(sim, budget, { clock, requestTimeoutMs: 150 });
    await impatient.getRun(ref, runId);
    sim.addFault({ kind: 'latency', ms: MINUTE, times: 1, path: runPath() });
    expect((await impatient.getRun(ref, runId))?.runId).toBe(runId);
    expect(sim.heldRequests()).toBe(1);
    await clock.advance(MINUTE);
    expect(sim.heldRequests()).toBe(0);
  });

  it('turns network failures into GithubUnavailableError after the retries, token call included, within the budget', async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const broken = new OctokitGithubGateway({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        appId: sim.app.appId,
        privateKey: sim.app.privateKey,
        remainingTimeMs: budget.remaining,
        retryBaseMs: 1,
        log: quietLog,
      });
      const error = await rejection(
        broken.rerunJob(ref, 2 ** 33, { runId: 2 ** 33, runAttempt: 1 }),
      );
      expect(error).toBeInstanceOf(GithubUnavailableError);
      expect(error).not.toBeInstanceOf(GithubRequestError);
      // One token call per attempt: octokit would otherwise retry it inside each attempt (4 × 4).
      expect(sockets).toHaveLength(4);
      budget.ms = 5_000;
      expect(await rejection(broken.getJob(ref, 2 ** 33))).toBeInstanceOf(GithubUnavailableError);
      expect(sockets).toHaveLength(5);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
