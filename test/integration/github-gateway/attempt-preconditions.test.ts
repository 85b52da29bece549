import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

const workflow = {
  name: 'ci',
  jobs: [{ name: 'test', runsOn: SCALE_SET, durationMs: 20 * MINUTE }],
};

async function setUp() {
  const world = buildWorld(workflow);
  await world.sim.start();
  const ref: RepoRef = { repo: REPO, installationId: world.installationId };
  return { ...world, gateway: gatewayFor(world.sim), ref };
}
type World = Awaited<ReturnType<typeof setUp>>;

/** The run's current attempt loses its runner mid-job and fails when the lock lapses. */
async function killCurrentAttempt({ sim, clock, startRunner }: World, runId: number) {
  const runner = startRunner();
  await clock.advance(5 * MINUTE);
  sim.actions.runnerStopped(runner.name, 'killed');
  await clock.advance(15 * MINUTE);
  expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'failure' });
}

const RERUN = /\/rerun-failed-jobs$/;
const posts = (world: World, from: number) =>
  served(world.sim, from).filter((line) => line.startsWith('POST'));

describe('re-runs and cancels check the attempt they were decided for', () => {
  let world: World;
  afterEach(async () => world.sim.stop());

  it('a lost re-run response, then missed webhooks: the run stays on attempt 2', async () => {
    world = await setUp();
    const { sim, gateway, ref } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    await killCurrentAttempt(world, runId);
    const decidedFor = { runId, runAttempt: 1 };

    // GitHub creates attempt 2, but the answer is lost on the way back (a 502 from a proxy).
    sim.addFault({ kind: 'lost-response', status: 502, times: 1, path: RERUN });
    const from = sim.requests().length;
    const first = await gateway.rerunFailedJobs(ref, decidedFor);

    expect(first).toEqual({ result: 'done' });
    expect(sim.run(runId)?.attempt).toBe(2);
    // One POST, never repeated by the client; the outcome was settled by reading the run.
    expect(posts(world, from)).toEqual([
      `POST /repos/${REPO}/actions/runs/${runId}/rerun-failed-jobs 502`,
    ]);

    // Attempt 2's webhooks never arrive; it fails for its own reasons.
    await killCurrentAttempt(world, runId);

    // The engine, still believing attempt 1 failed, tries again: nothing is sent.
    const again = await gateway.rerunFailedJobs(ref, decidedFor);
    expect(again).toEqual({
      result: 'moved-on',
      message: `run ${runId} is on attempt 2, not 1`,
    });
    expect(sim.run(runId)?.attempt).toBe(2);
    expect(posts(world, from)).toHaveLength(1);
  });

  it('reports a 5xx on the POST that did not take effect as unknown, and retries only after reading the run', async () => {
    world = await setUp();
    const { sim, gateway, ref } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    await killCurrentAttempt(world, runId);
    const decidedFor = { runId, runAttempt: 1 };

    sim.addFault({ kind: 'server-error', status: 500, times: 1, path: RERUN });
    const from = sim.requests().length;
    const outcome = await gateway.rerunFailedJobs(ref, decidedFor);

    expect(outcome).toEqual({
      result: 'unknown',
      message: `rerun failed jobs of run ${runId} in ${REPO}: 500 Internal Server Error; the run is still on attempt 1 (completed)`,
    });
    expect(sim.run(runId)?.attempt).toBe(1);
    expect(served(sim, from)).toEqual([
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
      `POST /repos/${REPO}/actions/runs/${runId}/rerun-failed-jobs 500`,
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
    ]);

    // The next try reads the run, finds it still on attempt 1, and only then asks again.
    expect(await gateway.rerunFailedJobs(ref, decidedFor)).toEqual({ result: 'done' });
    expect(sim.run(runId)?.attempt).toBe(2);
    expect(posts(world, from)).toHaveLength(2);
  });

  it('does not cancel a run that moved on to a new attempt', async () => {
    world = await setUp();
    const { sim, gateway, ref, startRunner } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    await killCurrentAttempt(world, runId);
    expect(await gateway.rerunFailedJobs(ref, { runId, runAttempt: 1 })).toEqual({
      result: 'done',
    });
    startRunner();
    const from = sim.requests().length;

    expect(await gateway.cancelRun(ref, { runId, runAttempt: 1 })).toEqual({
      result: 'moved-on',
      message: `run ${runId} is on attempt 2, not 1`,
    });
    expect(await gateway.forceCancelRun(ref, { runId, runAttempt: 1 })).toMatchObject({
      result: 'moved-on',
    });
    expect(posts(world, from)).toEqual([]);
    expect(sim.run(runId)?.status).not.toBe('completed');
  });
});
