import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

/** Two jobs in parallel: `unit` is killed with its runner, `integration` keeps running. */
const workflow = {
  name: 'ci',
  jobs: [
    { name: 'unit', runsOn: SCALE_SET, durationMs: 15 * MINUTE },
    { name: 'integration', runsOn: SCALE_SET, durationMs: 25 * MINUTE },
  ],
};

async function setUp() {
  const world = buildWorld(workflow, { timing: { forceCancelConcludeMs: 1000 } });
  await world.sim.start();
  const ref: RepoRef = { repo: REPO, installationId: world.installationId };
  const { runId } = world.sim.triggerRun(REPO, 'ci');
  const first = world.startRunner();
  world.startRunner();
  await world.clock.advance(2 * MINUTE);
  world.sim.actions.runnerStopped(first.name, 'killed');
  const jobId = (name: string) => {
    const job = world.sim.jobs(runId).find((j) => j.name === name);
    if (!job) throw new Error(`no job ${name}`);
    return job.id;
  };
  return {
    ...world,
    gateway: gatewayFor(world.sim),
    ref,
    runId,
    unit: jobId('unit'),
    integration: jobId('integration'),
  };
}

describe('the fast path’s cancels against the GitHub twin', () => {
  let world: Awaited<ReturnType<typeof setUp>>;
  afterEach(async () => world.sim.stop());

  it('sends no cancel while another job of the run is in progress, unless allowed', async () => {
    world = await setUp();
    const { sim, gateway, ref, runId, unit, integration } = world;
    const from = sim.requests().length;
    const deadOnly = { runId, runAttempt: 1, jobs: { inProgress: [unit], allowLiveJobs: false } };
    expect(await gateway.cancelRun(ref, deadOnly)).toEqual({
      result: 'moved-on',
      message: `job ${integration} (integration) of run ${runId} is still in progress: cancelling the run would cancel it`,
    });
    expect(served(sim, from).filter((r) => r.startsWith('POST'))).toEqual([]);

    const allowed = { ...deadOnly, jobs: { inProgress: [unit], allowLiveJobs: true } };
    expect(await gateway.cancelRun(ref, allowed)).toEqual({ result: 'done' });
    expect(await gateway.forceCancelRun(ref, allowed)).toEqual({ result: 'done' });
    await world.clock.advance(2000);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
  });

  it('sends no cancel once the job it is for has ended (its lock lapsed) while the run goes on', async () => {
    world = await setUp();
    const { sim, gateway, ref, runId, unit } = world;
    await world.clock.advance(11 * MINUTE);
    expect(sim.run(runId)?.status).toBe('in_progress');
    const forUnit = { runId, runAttempt: 1, jobs: { inProgress: [unit], allowLiveJobs: true } };
    expect(await gateway.cancelRun(ref, forUnit)).toEqual({
      result: 'moved-on',
      message: `job ${unit} of run ${runId} is failure`,
    });
    expect(sim.run(runId)?.status).toBe('in_progress');
  });

  it('answers try-again to 500 "Failed to cancel workflow run" and to 409 "re-run that has not yet queued", conflict to a completed run', async () => {
    world = await setUp();
    const { sim, gateway, ref, runId, unit } = world;
    const expected = { runId, runAttempt: 1, jobs: { inProgress: [unit], allowLiveJobs: true } };
    sim.addCancelFailure({ verb: 'force-cancel', status: 500, times: 1 });
    sim.addCancelFailure({ verb: 'cancel', status: 409, times: 1 });
    expect(await gateway.cancelRun(ref, expected)).toEqual({
      result: 'try-again',
      message: 'Cannot cancel a workflow re-run that has not yet queued.',
    });
    expect(await gateway.forceCancelRun(ref, expected)).toMatchObject({
      result: 'try-again',
      message: expect.stringMatching(/500 Failed to cancel workflow run.*still in_progress/),
    });
    // Sent again, as the rule does after its backoff: both go through.
    expect(await gateway.cancelRun(ref, expected)).toEqual({ result: 'done' });
    expect(await gateway.forceCancelRun(ref, expected)).toEqual({ result: 'done' });
    await world.clock.advance(2000);
    expect(sim.run(runId)?.status).toBe('completed');
    expect((await gateway.cancelRun(ref, { runId, runAttempt: 1 })).result).toBe('conflict');
  });
});

describe('GET /actions/runners/deprecations/{version} through the gateway', () => {
  it('says when a version stops running jobs and registering, and null dates for a current one', async () => {
    const world = buildWorld(workflow);
    await world.sim.start();
    try {
      const runtime = Date.parse('2026-09-25T00:00:00Z');
      world.sim.setRunnerDeprecation({
        below: '2.329.0',
        runtimeDeprecatesAt: runtime,
        registrationDeprecatesAt: null,
      });
      const gateway = gatewayFor(world.sim);
      const owner = { repo: REPO };
      expect(
        await gateway.runnerVersionDeprecation('v2.328.0', owner, world.installationId),
      ).toEqual({
        version: '2.328.0',
        runtimeDeprecatesAt: runtime,
        registrationDeprecatesAt: null,
      });
      expect(
        await gateway.runnerVersionDeprecation('2.330.1', owner, world.installationId),
      ).toEqual({ version: '2.330.1', runtimeDeprecatesAt: null, registrationDeprecatesAt: null });
      await expect(
        gateway.runnerVersionDeprecation('latest', owner, world.installationId),
      ).rejects.toThrow('not a runner version: latest');
    } finally {
      await world.sim.stop();
    }
  });
});
