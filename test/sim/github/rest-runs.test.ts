import {
  buildWorld,
  HOUR,
  MINUTE,
  octokitFor,
  ORG,
  rejection,
  REPO,
  SCALE_SET,
} from './sim-fixture.js';

const [owner, repo] = REPO.split('/') as [string, string];

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
  const baseUrl = await world.sim.start();
  const medic = octokitFor(baseUrl, world.sim.issueInstallationToken(world.installationId));
  const person = octokitFor(baseUrl, world.sim.issueUserToken('alice'));
  return { ...world, baseUrl, medic, person };
}

/** Plays a run where `test` is killed mid-job: it fails ~10 min later and `report` is skipped. */
async function runWithKilledTest(world: Awaited<ReturnType<typeof setUp>>) {
  const { sim, clock, startRunner } = world;
  const { runId } = sim.triggerRun(REPO, 'ci');
  startRunner();
  startRunner();
  await clock.advance(2 * MINUTE);
  const tester = startRunner();
  await clock.advance(5 * MINUTE);
  sim.actions.runnerStopped(tester.name, 'killed');
  return { runId, tester };
}

describe('GitHub twin REST: runs, re-runs and cancels through @octokit/plugin-rest-endpoint-methods', () => {
  let world: Awaited<ReturnType<typeof setUp>>;
  afterEach(async () => world.sim.stop());

  it('refuses a re-run while the run is in progress, and accepts it once the lost job failed and the run completed', async () => {
    world = await setUp();
    const { sim, clock, medic } = world;
    const { runId } = await runWithKilledTest(world);
    const testJob = sim.jobs(runId).find((job) => job.name === 'test');
    const early = await rejection(
      medic.rest.actions.reRunJobForWorkflowRun({ owner, repo, job_id: testJob?.id ?? 0 }),
    );
    expect(early.status).toBe(403);
    expect(early.response?.data).toMatchObject({ message: 'This workflow is already running' });

    await clock.advance(10 * MINUTE);
    const { data: run } = await medic.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure', run_attempt: 1 });
    const { data: annotations } = await medic.rest.checks.listAnnotations({
      owner,
      repo,
      check_run_id: testJob?.id ?? 0,
    });
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatchObject({ annotation_level: 'failure', path: '.github' });
    expect(annotations[0]?.message).toMatch(
      /^The self-hosted runner: .+? lost communication with the server\./,
    );

    const rerun = await medic.rest.actions.reRunJobForWorkflowRun({
      owner,
      repo,
      job_id: testJob?.id ?? 0,
    });
    expect(rerun.status).toBe(201);
    const { data: latest } = await medic.rest.actions.listJobsForWorkflowRun({
      owner,
      repo,
      run_id: runId,
    });
    expect(latest.jobs.map((job) => `${job.name}#${job.run_attempt}:${job.status}`)).toEqual([
      'build#1:completed',
      'lint#1:completed',
      'test#2:queued',
      'report#1:completed',
    ]);
    const { data: all } = await medic.rest.actions.listJobsForWorkflowRun({
      owner,
      repo,
      run_id: runId,
      filter: 'all',
    });
    expect(all.total_count).toBe(5);
    expect(all.jobs.map((job) => job.name)).toEqual(['build', 'lint', 'test', 'report', 'test']);
    const { data: attempt2 } = await medic.rest.actions.listJobsForWorkflowRunAttempt({
      owner,
      repo,
      run_id: runId,
      attempt_number: 2,
    });
    expect(attempt2.jobs.map((job) => job.name)).toEqual(['test']);

    world.startRunner();
    await clock.advance(20 * MINUTE);
    world.startRunner();
    await clock.advance(MINUTE);
    const { data: after } = await medic.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
    expect(after).toMatchObject({ status: 'completed', conclusion: 'success', run_attempt: 2 });
    expect(after.previous_attempt_url).toMatch(new RegExp(`/actions/runs/${runId}/attempts/1$`));
    expect(sim.jobs(runId).map((job) => `${job.name}#${job.runAttempt}:${job.conclusion}`)).toEqual(
      ['build#1:success', 'lint#1:success', 'test#2:success', 'report#2:success'],
    );
    expect(sim.audit().filter((entry) => entry.verb === 'rerun-job')).toEqual([
      {
        at: expect.any(Number),
        by: 'runner-medic',
        api: 'github',
        verb: 'rerun-job',
        target: `repos/${REPO}/actions/jobs/${testJob?.id}`,
        status: 403,
        runAttempt: 1,
      },
      {
        at: expect.any(Number),
        by: 'runner-medic',
        api: 'github',
        verb: 'rerun-job',
        target: `repos/${REPO}/actions/jobs/${testJob?.id}`,
        status: 201,
        runAttempt: 1,
      },
    ]);
  });

  it('re-runs failed jobs and their dependents, then refuses a second call while that attempt runs', async () => {
    world = await setUp();
    const { sim, clock, medic } = world;
    const { runId } = await runWithKilledTest(world);
    await clock.advance(10 * MINUTE);
    expect(
      (await medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId })).status,
    ).toBe(201);
    const second = await rejection(
      medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId }),
    );
    expect(second.status).toBe(403);
    expect(second.message).toContain('This workflow is already running');
    expect(sim.run(runId)?.attempt).toBe(2);
    expect(
      sim
        .jobs(runId)
        .filter((job) => job.runAttempt === 2)
        .map((job) => job.name),
    ).toEqual(['test']);
    expect(sim.run(runId)?.pending).toEqual(['report']);
    expect(
      sim.attempts(runId).map((a) => `${a.attempt}:${a.jobs.map((job) => job.name).join('+')}`),
    ).toEqual(['1:build+lint+test+report', '2:test']);
  });

  it('re-runs a whole run as a new attempt of every job', async () => {
    world = await setUp();
    const { sim, clock, medic, startRunner } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    for (let i = 0; i < 4; i++) {
      startRunner();
      await clock.advance(20 * MINUTE);
    }
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect((await medic.rest.actions.reRunWorkflow({ owner, repo, run_id: runId })).status).toBe(
      201,
    );
    expect(sim.jobs(runId).map((job) => `${job.name}#${job.runAttempt}:${job.status}`)).toEqual([
      'build#2:queued',
      'lint#2:queued',
      'test#1:completed',
      'report#1:completed',
    ]);
  });

  it('refuses to re-run a run created over a month ago', async () => {
    world = await setUp();
    const { sim, clock, medic } = world;
    const { runId } = sim.triggerRun(REPO, 'ci', { createdAt: clock.now() - 31 * 24 * HOUR });
    sim.cancelRun(runId, { force: true });
    const refused = await rejection(
      medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId }),
    );
    expect(refused.status).toBe(403);
    expect(refused.response?.data).toMatchObject({
      message: 'Unable to retry this workflow run because it was created over a month ago',
    });
  });

  it('cancels with 202, answers 409 once completed, and waits for a dead runner’s lock unless force-cancelled', async () => {
    world = await setUp();
    const { sim, clock, medic, person } = world;
    const { runId } = await runWithKilledTest(world);
    const cancel = await medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId });
    expect(cancel.status).toBe(202);
    const { data: stuck } = await medic.rest.actions.listJobsForWorkflowRun({
      owner,
      repo,
      run_id: runId,
    });
    expect(stuck.jobs.map((job) => `${job.name}:${job.status}`)).toEqual([
      'build:completed',
      'lint:completed',
      'test:in_progress',
    ]);
    await clock.advance(9 * MINUTE);
    expect(sim.run(runId)?.status).toBe('in_progress');

    expect(
      (await person.rest.actions.forceCancelWorkflowRun({ owner, repo, run_id: runId })).status,
    ).toBe(202);
    const { data: run } = await person.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
    expect(run).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    expect(sim.jobs(runId).map((job) => `${job.name}:${job.conclusion}`)).toEqual([
      'build:success',
      'lint:success',
      'test:cancelled',
      'report:cancelled',
    ]);
    const late = await rejection(
      medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId }),
    );
    expect(late.status).toBe(409);
    expect(late.response?.data).toMatchObject({
      message: 'Cannot cancel a workflow run that is completed.',
    });
    expect(
      sim
        .audit()
        .filter((e) => e.verb.includes('cancel'))
        .map((e) => `${e.by}:${e.verb}:${e.status}`),
    ).toEqual(['runner-medic:cancel:202', 'user:force-cancel:202', 'runner-medic:cancel:409']);
  });

  it('lists runs by status, and pages jobs with Link headers', async () => {
    world = await setUp();
    const { sim, medic, baseUrl } = world;
    const first = sim.triggerRun(REPO, 'ci').runId;
    const second = sim.triggerRun(REPO, 'ci').runId;
    sim.cancelRun(first, { force: true });
    const { data: queued } = await medic.rest.actions.listWorkflowRunsForRepo({
      owner,
      repo,
      status: 'queued',
    });
    expect(queued.workflow_runs.map((run) => run.id)).toEqual([second]);
    const { data: cancelled } = await medic.rest.actions.listWorkflowRunsForRepo({
      owner,
      repo,
      status: 'cancelled',
    });
    expect(cancelled.workflow_runs.map((run) => run.id)).toEqual([first]);

    const page1 = await medic.rest.actions.listJobsForWorkflowRun({
      owner,
      repo,
      run_id: first,
      filter: 'all',
      per_page: 3,
    });
    expect(page1.data.total_count).toBe(4);
    expect(page1.data.jobs).toHaveLength(3);
    const next = /<([^>]+)>; rel="next"/.exec(page1.headers.link ?? '')?.[1] ?? '';
    expect(next.startsWith(`${baseUrl}/repos/${REPO}/actions/runs/${first}/jobs?`)).toBe(true);
    const page2 = await medic.request(`GET ${next.slice(baseUrl.length)}`);
    expect((page2.data as { jobs: unknown[] }).jobs).toHaveLength(1);
    expect(page2.headers.link).toContain('rel="first"');
    expect(page2.headers.link).not.toContain('rel="next"');
  });

  it('filters runs by the created qualifier, as a sweep bounds its window', async () => {
    world = await setUp();
    const { sim, clock, medic } = world;
    const old = sim.triggerRun(REPO, 'ci', { createdAt: clock.now() - 3 * 24 * HOUR }).runId;
    const recent = sim.triggerRun(REPO, 'ci').runId;
    const since = new Date(clock.now() - HOUR).toISOString();
    const { data } = await medic.rest.actions.listWorkflowRunsForRepo({
      owner,
      repo,
      status: 'queued',
      created: `>=${since}`,
    });
    expect(data.workflow_runs.map((run) => run.id)).toEqual([recent]);
    const day = new Date(clock.now() - 3 * 24 * HOUR).toISOString().slice(0, 10);
    const { data: thatDay } = await medic.rest.actions.listWorkflowRunsForRepo({
      owner,
      repo,
      created: day,
    });
    expect(thatDay.workflow_runs.map((run) => run.id)).toEqual([old]);
  });

  it('shows who re-ran a run as its triggering actor: the App’s bot or the person', async () => {
    world = await setUp();
    const { sim, medic, person } = world;
    const { runId } = sim.triggerRun(REPO, 'ci');
    sim.cancelRun(runId, { force: true });
    await medic.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id: runId });
    const { data: byBot } = await medic.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
    expect(byBot.triggering_actor).toMatchObject({ login: 'runner-medic[bot]', type: 'Bot' });
    expect(byBot.actor).toMatchObject({ login: 'octocat' });
    sim.cancelRun(runId, { force: true });
    await person.rest.actions.reRunWorkflow({ owner, repo, run_id: runId });
    const { data: byPerson } = await person.rest.actions.getWorkflowRun({
      owner,
      repo,
      run_id: runId,
    });
    expect(byPerson).toMatchObject({
      run_attempt: 3,
      triggering_actor: { login: 'alice', type: 'User' },
    });
  });

  it('hides another owner’s repository from an installation token, and refuses bad or missing tokens', async () => {
    world = await setUp();
    const { sim, baseUrl } = world;
    sim.createRepo('rival/app');
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(world.installationId));
    expect(
      (await rejection(medic.rest.actions.listWorkflowRunsForRepo({ owner: 'rival', repo: 'app' })))
        .status,
    ).toBe(404);
    const stranger = octokitFor(baseUrl, 'ghs_not-a-token');
    const bad = await rejection(stranger.rest.actions.listWorkflowRunsForRepo({ owner, repo }));
    expect(bad.status).toBe(401);
    expect(bad.response?.data).toMatchObject({ message: 'Bad credentials' });
    expect(ORG).toBe(owner);
  });
});
