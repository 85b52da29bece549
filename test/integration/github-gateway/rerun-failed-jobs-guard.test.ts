import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

// `rerun-failed-jobs` re-runs every failed job of the run, genuine failures included
// (docs.github.com REST, "Re-run failed jobs from a workflow run"): the gateway sends it only
// when GitHub's latest executions hold no failed job beyond the ones found killed.

const workflow = {
  name: 'ci',
  jobs: [
    { name: 'lint', runsOn: SCALE_SET, durationMs: MINUTE, fails: {} },
    { name: 'e2e', runsOn: SCALE_SET, durationMs: 10 * MINUTE },
  ],
};

async function setUp() {
  const world = buildWorld(workflow);
  await world.sim.start();
  const ref: RepoRef = { repo: REPO, installationId: world.installationId };
  const { runId } = world.sim.triggerRun(REPO, 'ci');
  world.startRunner();
  const e2eRunner = world.startRunner();
  await world.clock.advance(3 * MINUTE);
  world.sim.actions.runnerStopped(e2eRunner.name, 'sigterm');
  await world.clock.advance(MINUTE);
  const idOf = (name: string) => world.sim.jobs(runId).find((j) => j.name === name)?.id ?? 0;
  return {
    ...world,
    gateway: gatewayFor(world.sim),
    ref,
    runId,
    lint: idOf('lint'),
    e2e: idOf('e2e'),
  };
}
type World = Awaited<ReturnType<typeof setUp>>;

const posts = (world: World, from: number) =>
  served(world.sim, from).filter((line) => line.startsWith('POST'));

describe('rerun-failed-jobs is sent only when every failed job was found killed', () => {
  let world: World;
  afterEach(async () => world.sim.stop());

  it('a failed job runner-medic did not judge killed (lint): nothing is sent, decide again', async () => {
    world = await setUp();
    const { gateway, ref, runId, sim } = world;
    const from = sim.requests().length;
    const outcome = await gateway.rerunFailedJobs(ref, {
      runId,
      runAttempt: 1,
      killedJobs: [world.e2e],
    });
    expect(outcome).toEqual({
      result: 'try-again',
      message: `job ${world.lint} (lint) of run ${runId} ended failure and was not found killed: rerun failed jobs of run ${runId} in ${REPO} would re-run it too`,
    });
    expect(posts(world, from)).toEqual([]);
    expect(sim.run(runId)?.attempt).toBe(1);
  });

  it('every failed job found killed: sent', async () => {
    world = await setUp();
    const { gateway, ref, runId, sim } = world;
    const outcome = await gateway.rerunFailedJobs(ref, {
      runId,
      runAttempt: 1,
      killedJobs: [world.e2e, world.lint],
    });
    expect(outcome).toEqual({ result: 'done' });
    expect(sim.jobs(runId).map((j) => `${j.name}#${j.runAttempt}`)).toEqual(['lint#2', 'e2e#2']);
  });
});
