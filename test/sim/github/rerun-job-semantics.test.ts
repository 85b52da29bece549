import { MAX_RERUNS, RERUN_LIMIT_ANNOTATION } from '../../../sim/github/model/run-control.js';
import { buildWorld, HOUR, MINUTE, octokitFor, rejection, REPO, SCALE_SET } from './sim-fixture.js';

// The per-job re-run as GitHub documents it (docs.github.com/en/rest/actions/workflow-runs
// #re-run-a-job-from-a-workflow-run: "Re-run a job and its dependent jobs in a workflow run"),
// with the limits of docs.github.com/en/actions/managing-workflow-runs/re-running-workflows-and-jobs
// (30 days after the initial run, at most 50 re-runs, full or partial), driven through octokit
// over the twin's socket.

const [owner, repo] = REPO.split('/') as [string, string];

const workflow = {
  name: 'ci',
  jobs: [
    // Fails on its own (exit code 1) on every attempt.
    { name: 'lint', runsOn: SCALE_SET, durationMs: MINUTE, fails: {} },
    { name: 'e2e', runsOn: SCALE_SET, durationMs: 10 * MINUTE },
    { name: 'deploy', runsOn: SCALE_SET, needs: ['e2e'], durationMs: MINUTE },
  ],
};

/** The world with one run of `ci`, created `ageMs` before now. */
async function setUp(ageMs = 0) {
  const world = buildWorld(workflow);
  const baseUrl = await world.sim.start();
  const medic = octokitFor(baseUrl, world.sim.issueInstallationToken(world.installationId));
  const createdAt = world.clock.now() - ageMs;
  const { runId } = world.sim.triggerRun(REPO, 'ci', { createdAt });
  return { ...world, medic, runId };
}
type World = Awaited<ReturnType<typeof setUp>>;

/** Attempt 1: lint fails on its own, e2e's runner is SIGTERMed mid-job, deploy is skipped. */
async function lintFailsBesideLostE2e(world: World) {
  const { sim, clock, startRunner, runId } = world;
  startRunner();
  const e2eRunner = startRunner();
  await clock.advance(3 * MINUTE);
  sim.actions.runnerStopped(e2eRunner.name, 'sigterm');
  await clock.advance(MINUTE);
  const jobOf = (name: string) => sim.jobs(runId).find((job) => job.name === name);
  return { e2e: jobOf('e2e'), lint: jobOf('lint') };
}

const latest = async (world: World) =>
  (
    await world.medic.rest.actions.listJobsForWorkflowRun({ owner, repo, run_id: world.runId })
  ).data.jobs.map((job) => `${job.name}#${job.run_attempt}:${job.conclusion ?? job.status}`);

describe('GitHub twin: POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun', () => {
  let world: World;
  afterEach(async () => world.sim.stop());

  it('re-runs the job and the jobs that need it, and leaves a genuine failure beside it alone', async () => {
    world = await setUp();
    const { e2e } = await lintFailsBesideLostE2e(world);
    expect(await latest(world)).toEqual(['lint#1:failure', 'e2e#1:failure', 'deploy#1:skipped']);

    const accepted = await world.medic.rest.actions.reRunJobForWorkflowRun({
      owner,
      repo,
      job_id: e2e?.id ?? 0,
    });
    expect(accepted.status).toBe(201);
    const { data: run } = await world.medic.rest.actions.getWorkflowRun({
      owner,
      repo,
      run_id: world.runId,
    });
    expect(run).toMatchObject({ run_attempt: 2, status: 'queued' });
    // deploy (needs: e2e) waits in the new attempt; lint keeps its failure from attempt 1.
    expect(world.sim.run(world.runId)?.pending).toEqual(['deploy']);
    expect(await latest(world)).toEqual(['lint#1:failure', 'e2e#2:queued', 'deploy#1:skipped']);

    world.startRunner();
    await world.clock.advance(10 * MINUTE);
    world.startRunner();
    await world.clock.advance(MINUTE);
    expect(await latest(world)).toEqual(['lint#1:failure', 'e2e#2:success', 'deploy#2:success']);
    expect(world.sim.run(world.runId)).toMatchObject({ attempt: 2, conclusion: 'failure' });
  });

  it('answers 403 while the run is in progress, and changes nothing', async () => {
    world = await setUp();
    const { e2e, lint } = await lintFailsBesideLostE2e(world);
    await world.medic.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: e2e?.id ?? 0 });
    const refused = await rejection(
      world.medic.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: lint?.id ?? 0 }),
    );
    expect(refused.status).toBe(403);
    expect(refused.response?.data).toMatchObject({ message: 'This workflow is already running' });
    expect(world.sim.run(world.runId)?.attempt).toBe(2);
    expect(await latest(world)).toEqual(['lint#1:failure', 'e2e#2:queued', 'deploy#1:skipped']);
  });

  it('answers 403 after 30 days from the first run, however recent its last attempt', async () => {
    world = await setUp(29 * 24 * HOUR);
    const { e2e } = await lintFailsBesideLostE2e(world);
    await world.medic.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: e2e?.id ?? 0 });
    world.startRunner();
    await world.clock.advance(10 * MINUTE);
    world.startRunner();
    await world.clock.advance(MINUTE);
    await world.clock.advance(2 * 24 * HOUR);
    for (const call of [
      () => world.medic.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: e2e?.id ?? 0 }),
      () => world.medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: world.runId }),
      () => world.medic.rest.actions.reRunWorkflow({ owner, repo, run_id: world.runId }),
    ]) {
      const refused = await rejection(call());
      expect(refused.status).toBe(403);
      expect(refused.message).toContain('created over a month ago');
    }
    expect(world.sim.run(world.runId)?.attempt).toBe(2);
  });

  it.each([
    ['rerun-job', 'job'],
    ['rerun-failed-jobs', 'failed'],
    ['rerun', 'all'],
  ] as const)(
    'past 50 re-runs, %s is accepted (201) but its attempt fails at once with an annotation (%s)',
    async (_, which) => {
      world = await setUp();
      const { sim, clock, startRunner, runId, medic } = world;
      const lint = async () => sim.jobs(runId).find((job) => job.name === 'lint');
      startRunner();
      startRunner();
      await clock.advance(10.5 * MINUTE);
      startRunner();
      await clock.advance(2 * MINUTE);
      expect(sim.run(runId)).toMatchObject({ attempt: 1, status: 'completed' });
      // Re-run the failing lint 50 times (each attempt runs, and fails on its own again).
      for (let i = 0; i < MAX_RERUNS; i++) {
        expect(sim.rerunJob((await lint())?.id ?? 0).status).toBe(201);
        startRunner();
        await clock.advance(2 * MINUTE);
        expect(sim.run(runId)).toMatchObject({ attempt: i + 2, status: 'completed' });
      }
      const call =
        which === 'job'
          ? medic.rest.actions.reRunJobForWorkflowRun({
              owner,
              repo,
              job_id: (await lint())?.id ?? 0,
            })
          : which === 'failed'
            ? medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId })
            : medic.rest.actions.reRunWorkflow({ owner, repo, run_id: runId });
      expect((await call).status).toBe(201);
      const { data: run } = await medic.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
      expect(run).toMatchObject({
        run_attempt: MAX_RERUNS + 2,
        status: 'completed',
        conclusion: 'failure',
      });
      const { data: attempt } = await medic.rest.actions.listJobsForWorkflowRunAttempt({
        owner,
        repo,
        run_id: runId,
        attempt_number: MAX_RERUNS + 2,
      });
      expect(attempt.jobs.length).toBeGreaterThan(0);
      for (const job of attempt.jobs) {
        expect(job).toMatchObject({ conclusion: 'failure', runner_name: null });
        const { data: annotations } = await medic.rest.checks.listAnnotations({
          owner,
          repo,
          check_run_id: job.id,
        });
        expect(annotations.map((a) => a.message)).toEqual([RERUN_LIMIT_ANNOTATION]);
      }
    },
  );
});
