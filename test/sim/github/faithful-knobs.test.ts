import {
  buildWorld,
  MINUTE,
  octokitFor,
  rejection,
  REPO,
  RequestError,
  SCALE_SET,
} from './sim-fixture.js';
import type { GitHubSimOptions } from '../../../sim/github/github-sim.js';
import { basicError, hasPath, responseValidator } from './openapi-check.js';

const [owner, repo] = REPO.split('/') as [string, string];
const RUNS = '/repos/{owner}/{repo}/actions/runs/{run_id}';

async function setUp(options: Partial<GitHubSimOptions> = {}) {
  const world = buildWorld(
    { name: 'ci', jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 30 * MINUTE }] },
    options,
  );
  const baseUrl = await world.sim.start();
  const medic = octokitFor(baseUrl, world.sim.issueInstallationToken(world.installationId));
  return { ...world, baseUrl, medic };
}

describe('GitHub twin: the behaviour measured on real GitHub, as knobs', () => {
  let world: Awaited<ReturnType<typeof setUp>>;
  afterEach(async () => world.sim.stop());

  it('concludes a SIGTERMed runner’s job gracefulStopConcludeMs later (GAG: 15–26 s), not at once', async () => {
    world = await setUp({ timing: { gracefulStopConcludeMs: 20_000 } });
    const { sim, clock, startRunner } = world;
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const runner = startRunner();
    await clock.advance(2 * MINUTE);
    sim.actions.runnerStopped(runner.name, 'sigterm');
    await clock.advance(19_999);
    expect(sim.job(jobIds[0] ?? 0)?.status).toBe('in_progress');
    expect(sim.actions.removeRunner(runner.runnerId)).toBe('busy');
    await clock.advance(1);
    expect(sim.job(jobIds[0] ?? 0)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(sim.job(jobIds[0] ?? 0)?.annotations.map((a) => a.message)).toEqual([
      'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.',
      'The operation was canceled.',
    ]);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'failure' });
  });

  it('force-cancels a dead runner’s job forceCancelConcludeMs later, while a plain cancel waits for the 576 s lock', async () => {
    world = await setUp({ timing: { forceCancelConcludeMs: 1000 } });
    const { sim, clock, startRunner, medic } = world;
    expect(sim.timing.lockTtlMs).toBe(576_000);
    const { runId } = sim.triggerRun(REPO, 'ci');
    const runner = startRunner();
    await clock.advance(2 * MINUTE + 10_000);
    sim.actions.runnerStopped(runner.name, 'killed');
    expect(
      (await medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId })).status,
    ).toBe(202);
    await clock.advance(5 * MINUTE);
    expect(sim.run(runId)?.status).toBe('in_progress');
    const forced = await medic.rest.actions.forceCancelWorkflowRun({ owner, repo, run_id: runId });
    expect(forced.status).toBe(202);
    await clock.advance(999);
    expect(sim.run(runId)?.status).toBe('in_progress');
    await clock.advance(1);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    expect(sim.jobs(runId).map((j) => j.conclusion)).toEqual(['cancelled']);
    expect(
      (await medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId })).status,
    ).toBe(201);
  });

  it('keeps answering 403 already running for alreadyRunningAfterCompletionMs after the run completed', async () => {
    world = await setUp({ behaviour: { alreadyRunningAfterCompletionMs: 90_000 } });
    const { sim, clock, startRunner, medic } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    const runner = startRunner();
    await clock.advance(MINUTE);
    sim.actions.runnerStopped(runner.name, 'sigterm');
    expect(sim.run(runId)?.status).toBe('completed');
    const statuses: number[] = [];
    for (let call = 0; call < 4; call += 1) {
      const answer = await medic.rest.actions
        .reRunWorkflowFailedJobs({ owner, repo, run_id: runId })
        .catch((error: unknown) => error as RequestError);
      statuses.push(answer.status);
      if (answer instanceof RequestError)
        expect(answer.response?.data).toMatchObject({
          message: 'This workflow is already running',
        });
      await clock.advance(30_000);
    }
    expect(statuses).toEqual([403, 403, 403, 201]);
  });

  it('fails cancel with 409 "re-run not yet queued" and force-cancel with 500, as configured, then lets them through', async () => {
    world = await setUp();
    const { sim, clock, startRunner, medic } = world;
    sim.addCancelFailure({ verb: 'cancel', status: 409, times: 1 });
    sim.addCancelFailure({ verb: 'force-cancel', status: 500, until: clock.now() + MINUTE });
    const { runId } = sim.triggerRun(REPO, 'ci');
    startRunner();
    await clock.advance(MINUTE / 2);

    const conflict = await rejection(
      medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.response?.data).toMatchObject({
      message: 'Cannot cancel a workflow re-run that has not yet queued.',
    });
    const failed = await rejection(
      medic.rest.actions.forceCancelWorkflowRun({ owner, repo, run_id: runId }),
    );
    expect(failed.status).toBe(500);
    expect(failed.response?.data).toMatchObject({ message: 'Failed to cancel workflow run' });
    expect(sim.run(runId)?.status).toBe('in_progress');

    // The 409 is described by GitHub's OpenAPI; the 500 is not, so it is checked as basic-error.
    const validate409 = responseValidator(`${RUNS}/cancel`, 'post', 409);
    expect(validate409).toBeDefined();
    expect(validate409?.(conflict.response?.data)).toBe(true);
    expect(responseValidator(`${RUNS}/force-cancel`, 'post', 500)).toBeUndefined();
    expect(basicError(failed.response?.data)).toBe(true);

    await clock.advance(MINUTE);
    const done = await medic.rest.actions.forceCancelWorkflowRun({ owner, repo, run_id: runId });
    expect(done.status).toBe(202);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    expect(
      sim
        .audit()
        .filter((e) => e.verb.includes('cancel'))
        .map((e) => `${e.verb}:${e.status}`),
    ).toEqual(['cancel:409', 'force-cancel:500', 'force-cancel:202']);
  });

  it('answers the runner deprecations endpoint, refuses jobs to deprecated runners, and says why', async () => {
    const runtime = Date.parse('2026-09-25T00:00:00Z');
    world = await setUp({
      runnerDeprecation: {
        below: '2.329.0',
        runtimeDeprecatesAt: runtime,
        registrationDeprecatesAt: Date.parse('2026-09-18T00:00:00Z'),
      },
    });
    const { sim, clock, medic, scaleSetId } = world;
    // The endpoint is newer than @octokit/openapi's description: nothing to validate it against.
    expect(hasPath('/actions/runners/deprecations/{version}')).toBe(false);
    const old = await medic.request('GET /actions/runners/deprecations/{version}', {
      version: '2.328.0',
    });
    expect(old.data).toEqual({
      runtime_deprecates_at: '2026-09-25T00:00:00Z',
      registration_deprecates_at: '2026-09-18T00:00:00Z',
    });
    const current = await medic.request('GET /actions/runners/deprecations/{version}', {
      version: '2.338.1',
    });
    expect(current.data).toEqual({ runtime_deprecates_at: null, registration_deprecates_at: null });
    const bad = await rejection(
      medic.request('GET /actions/runners/deprecations/{version}', { version: 'latest' }),
    );
    expect(bad.status).toBe(404);

    await clock.advanceTo(runtime);
    sim.triggerRun(REPO, 'ci');
    sim.actions.registerRunner(scaleSetId, 'old-runner');
    expect(sim.actions.runnerVersionRefusal('old-runner', '2.328.0')).toBe(
      'Runner version v2.328.0 is deprecated and cannot receive messages.',
    );
    expect(sim.actions.acquireJob('old-runner')).toBeUndefined();
    sim.actions.registerRunner(scaleSetId, 'new-runner');
    expect(sim.actions.runnerVersionRefusal('new-runner', '2.338.1')).toBeUndefined();
    expect(sim.actions.acquireJob('new-runner')?.displayName).toBe('build');
    expect(sim.audit().filter((e) => e.verb === 'refuse-runner-version')).toHaveLength(1);
  });
});
