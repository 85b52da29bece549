import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { HOUR, MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

const workflow = {
  name: 'ci',
  jobs: [
    { name: 'build', runsOn: SCALE_SET, durationMs: 2 * MINUTE },
    { name: 'test', runsOn: SCALE_SET, needs: ['build'], durationMs: 20 * MINUTE },
    { name: 'report', runsOn: SCALE_SET, needs: ['test'], durationMs: MINUTE },
    { name: 'lint', runsOn: SCALE_SET, durationMs: MINUTE },
  ],
};

async function setUp() {
  const world = buildWorld(workflow);
  await world.sim.start();
  const ref: RepoRef = { repo: REPO, installationId: world.installationId };
  return { ...world, gateway: gatewayFor(world.sim), ref };
}

/** `test` is killed mid-job: it fails when its lock lapses ~10 min later. */
async function killTest(world: Awaited<ReturnType<typeof setUp>>) {
  const { sim, clock, startRunner } = world;
  const { runId } = sim.triggerRun(REPO, 'ci');
  startRunner();
  startRunner();
  await clock.advance(2 * MINUTE);
  const tester = startRunner();
  await clock.advance(5 * MINUTE);
  sim.actions.runnerStopped(tester.name, 'killed');
  const testJob = sim.jobs(runId).find((job) => job.name === 'test');
  if (!testJob) throw new Error('no test job');
  return { runId, testJobId: testJob.id };
}

describe('GithubGateway re-runs and cancels against the GitHub twin', () => {
  let world: Awaited<ReturnType<typeof setUp>>;
  afterEach(async () => world.sim.stop());

  it('answers already-running to a job re-run while the run is in progress, without asking GitHub, and done once it completed', async () => {
    world = await setUp();
    const { sim, clock, gateway, ref } = world;
    const { runId, testJobId } = await killTest(world);
    expect(testJobId).toBeGreaterThan(2 ** 31);
    const attempt1 = { runId, runAttempt: 1 };

    expect(await gateway.rerunJob(ref, testJobId, attempt1)).toEqual({
      result: 'already-running',
      message: `run ${runId} is in_progress`,
    });
    expect(sim.run(runId)?.attempt).toBe(1);

    await clock.advance(10 * MINUTE);
    expect(sim.run(runId)?.status).toBe('completed');
    expect(await gateway.rerunJob(ref, testJobId, attempt1)).toEqual({ result: 'done' });
    expect(sim.run(runId)?.attempt).toBe(2);
    expect(
      sim
        .audit()
        .filter((e) => e.verb === 'rerun-job')
        .map((e) => `${e.by}:${e.target}:${e.status}`),
    ).toEqual([`runner-medic:repos/${REPO}/actions/jobs/${testJobId}:201`]);
  });

  it('re-runs failed jobs once the run completed, and a second call for attempt 1 sends nothing', async () => {
    world = await setUp();
    const { sim, clock, gateway, ref } = world;
    const { runId } = await killTest(world);
    const attempt1 = { runId, runAttempt: 1 };
    expect((await gateway.rerunFailedJobs(ref, attempt1)).result).toBe('already-running');
    await clock.advance(10 * MINUTE);
    expect(await gateway.rerunFailedJobs(ref, attempt1)).toEqual({ result: 'done' });
    expect(
      sim
        .jobs(runId)
        .filter((job) => job.runAttempt === 2)
        .map((job) => job.name),
    ).toEqual(['test']);
    expect(await gateway.rerunFailedJobs(ref, attempt1)).toEqual({
      result: 'moved-on',
      message: `run ${runId} is on attempt 2, not 1`,
    });
    expect(
      sim
        .audit()
        .filter((e) => e.verb === 'rerun-failed-jobs')
        .map((e) => e.status),
    ).toEqual([201]);
  });

  it('reports other 403s as refused with GitHub’s message, and unknown jobs and runs as not-found', async () => {
    world = await setUp();
    const { sim, clock, gateway, ref } = world;
    const { runId } = sim.triggerRun(REPO, 'ci', { createdAt: clock.now() - 31 * 24 * HOUR });
    sim.cancelRun(runId, { force: true });
    expect(await gateway.rerunFailedJobs(ref, { runId, runAttempt: 1 })).toEqual({
      result: 'refused',
      message: 'Unable to retry this workflow run because it was created over a month ago',
    });
    const ok = sim.triggerRun(REPO, 'ci').runId;
    for (let i = 0; i < 4; i++) {
      world.startRunner();
      await clock.advance(20 * MINUTE);
    }
    expect(sim.run(ok)).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(await gateway.rerunFailedJobs(ref, { runId: ok, runAttempt: 1 })).toEqual({
      result: 'refused',
      message: 'This workflow run cannot be retried',
    });
    expect(await gateway.rerunJob(ref, 2 ** 40 + 3, { runId: ok, runAttempt: 1 })).toEqual({
      result: 'not-found',
      message: 'Not Found',
    });
    expect((await gateway.cancelRun(ref, { runId: 2 ** 40 + 5, runAttempt: 1 })).result).toBe(
      'not-found',
    );
  });

  it('rejects a malformed id or repository name before any request, as a RangeError', async () => {
    world = await setUp();
    const { sim, gateway, ref } = world;
    const from = sim.requests().length;
    await expect(gateway.rerunJob(ref, 1, { runId: 2 ** 53, runAttempt: 1 })).rejects.toThrow(
      RangeError,
    );
    await expect(gateway.cancelRun(ref, { runId: 1.5, runAttempt: 1 })).rejects.toThrow(
      'not a GitHub id: 1.5',
    );
    await expect(gateway.getJob(ref, -1)).rejects.toThrow(RangeError);
    await expect(
      gateway.rerunFailedJobs({ ...ref, repo: 'acme' }, { runId: 1, runAttempt: 1 }),
    ).rejects.toThrow('not an owner/repo name: acme');
    expect(sim.requests().slice(from)).toEqual([]);
  });

  it('cancels with 202 as done, answers conflict once the run completed, and force-cancels a run stuck on a dead runner', async () => {
    world = await setUp();
    const { sim, clock, gateway, ref } = world;
    const { runId } = await killTest(world);
    const attempt1 = { runId, runAttempt: 1 };
    expect(await gateway.cancelRun(ref, attempt1)).toEqual({ result: 'done' });
    await clock.advance(MINUTE);
    expect(sim.run(runId)?.status).toBe('in_progress');

    expect(await gateway.forceCancelRun(ref, attempt1)).toEqual({ result: 'done' });
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });

    const before = sim.requests().length;
    expect(await gateway.cancelRun(ref, attempt1)).toEqual({
      result: 'conflict',
      message: `run ${runId} has already completed`,
    });
    expect((await gateway.forceCancelRun(ref, attempt1)).result).toBe('conflict');
    expect(served(sim, before)).toEqual([
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
    ]);
    expect(
      sim
        .audit()
        .filter((e) => e.verb.includes('cancel'))
        .map((e) => `${e.by}:${e.verb}:${e.status}`),
    ).toEqual(['runner-medic:cancel:202', 'runner-medic:force-cancel:202']);
  });
});
