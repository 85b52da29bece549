import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { MINUTE, ORG, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

const workflow = { name: 'ci', jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: MINUTE }] };

/** A run whose only job was killed mid-run and failed when its lock lapsed: a re-run is due. */
async function failedRun(world: ReturnType<typeof buildWorld>) {
  const { sim, clock, startRunner } = world;
  const { runId } = sim.triggerRun(REPO, 'ci');
  const runner = startRunner();
  await clock.advance(10_000);
  sim.actions.runnerStopped(runner.name, 'killed');
  await clock.advance(15 * MINUTE);
  return runId;
}

describe("the sweep's observe calls spend a share of the installation's hour; act calls never wait", () => {
  it('stops observing at 5% of the limit, its look-up of the limit included, and a re-run still goes out at once', async () => {
    // A limit of 200 an hour: 5% is 10 observe calls.
    const world = buildWorld(workflow, { rateLimit: 200 });
    await world.sim.start();
    const { sim, installationId } = world;
    const gateway = gatewayFor(sim, undefined, { clock: world.clock });
    const ref: RepoRef = { repo: REPO, installationId };
    const runId = await failedRun(world);
    const from = sim.requests().length;
    const answers: (number | null)[] = [];
    for (let i = 0; i < 15; i++)
      answers.push(
        await gateway.observe(
          installationId,
          async () => (await gateway.getRun(ref, runId))?.runId ?? 0,
        ),
      );
    // The share bounds every call the sweep makes: GET /rate_limit (free at GitHub) and nine
    // reads are its ten, and nothing more reached GitHub.
    expect(answers.filter((a) => a === runId)).toHaveLength(9);
    expect(answers.slice(9)).toEqual([null, null, null, null, null, null]);
    expect(served(sim, from)).toHaveLength(10);
    expect(served(sim, from).filter((r) => r.startsWith('GET /repos/'))).toHaveLength(9);
    expect(gateway.budgetUsed(installationId)).toBe(4.5);

    expect(await gateway.rerunFailedJobs(ref, { runId, runAttempt: 1 })).toEqual({
      result: 'done',
    });
    expect(sim.run(runId)?.attempt).toBe(2);
    await sim.stop();
  });

  it('an installation with 0 calls remaining gets no observe call, but a re-run is sent', async () => {
    const world = buildWorld(workflow);
    await world.sim.start();
    const { sim, installationId } = world;
    const gateway = gatewayFor(sim, undefined, { clock: world.clock });
    const ref: RepoRef = { repo: REPO, installationId };
    const runId = await failedRun(world);
    sim.exhaustRateLimit(installationId);
    const from = sim.requests().length;

    const listed = await gateway.observe(installationId, () =>
      gateway.listRunnersPage({ org: ORG }, installationId, 1),
    );
    expect(listed).toBeNull();
    // Only GET /rate_limit, which does not count against the limit.
    expect(served(sim, from)).toEqual(['GET /rate_limit 200']);
    expect(gateway.budgetUsed(installationId)).toBe(100);

    // The act call is not held back by the budget: it reaches GitHub (which refuses it, for now).
    const rerun = gateway.rerunFailedJobs(ref, { runId, runAttempt: 1 });
    await expect(rerun).rejects.toThrow(/rate limit/i);
    expect(served(sim, from).slice(1)[0]).toBe(`GET /repos/${REPO}/actions/runs/${runId} 403`);
    await sim.stop();
  });
});
