import { SimClock } from '../../../sim/clock.js';
import { GitHubSim } from '../../../sim/github/github-sim.js';
import type { GitHubEvent } from '../../../sim/github/model/github-event.js';
import { HOUR, MINUTE, ORG, REPO, SCALE_SET, buildWorld } from './sim-fixture.js';

const simple = { name: 'ci', jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 5 * MINUTE }] };

function eventsOf(sim: GitHubSim): string[] {
  const seen: string[] = [];
  sim.on((event: GitHubEvent) =>
    seen.push(
      event.type === 'workflow_job' ? `${event.job.name}:${event.action}` : `run:${event.action}`,
    ),
  );
  return seen;
}

describe('GitHub twin: jobs on ARC scale-set runners', () => {
  it('queues a job for its scale set, runs it on the runner that acquires it, and completes it after its duration', async () => {
    const { sim, clock, scaleSetId, startRunner } = buildWorld(simple);
    const seen = eventsOf(sim);
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const jobId = jobIds[0] ?? 0;
    expect(jobId).toBeGreaterThan(2 ** 31);
    expect(sim.actions.assignedJobCount(scaleSetId)).toBe(1);

    const finished: string[] = [];
    sim.actions.onJobFinished((runnerName, job) => finished.push(`${runnerName}:${job.jobId}`));
    const runner = startRunner();
    expect(runner.assignment).toMatchObject({
      jobId,
      runId,
      runAttempt: 1,
      repository: REPO,
      displayName: 'build',
    });
    expect(sim.job(jobId)).toMatchObject({
      status: 'in_progress',
      runnerName: runner.name,
      runnerId: runner.runnerId,
    });
    expect(sim.actions.assignedJobCount(scaleSetId)).toBe(1);
    expect(sim.actions.removeRunner(runner.runnerId)).toBe('busy');

    await clock.advance(5 * MINUTE - 1);
    expect(sim.job(jobId)?.status).toBe('in_progress');
    await clock.advance(1);
    expect(sim.job(jobId)).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(finished).toEqual([`${runner.name}:${jobId}`]);
    expect(sim.actions.assignedJobCount(scaleSetId)).toBe(0);
    expect(seen).toEqual([
      'run:requested',
      'build:queued',
      'run:in_progress',
      'build:in_progress',
      'build:completed',
      'run:completed',
    ]);
  });

  it('gives a job only to a scale set of the same owner whose name is among the runs-on labels', () => {
    const { sim, startRunner } = buildWorld(simple);
    const otherOrgSet = sim.actions.registerScaleSet({ owner: 'other-org', name: SCALE_SET });
    const otherNameSet = sim.actions.registerScaleSet({ owner: ORG, name: 'arc-gpu' });
    sim.triggerRun(REPO, 'ci');
    expect(sim.actions.assignedJobCount(otherOrgSet)).toBe(0);
    expect(sim.actions.assignedJobCount(otherNameSet)).toBe(0);
    sim.actions.registerRunner(otherNameSet, 'gpu-1');
    expect(sim.actions.acquireJob('gpu-1')).toBeUndefined();
    expect(startRunner().assignment).toBeDefined();
  });

  it('refuses work to a runner whose registration was removed, and to an unknown runner', () => {
    const { sim, scaleSetId } = buildWorld(simple);
    sim.triggerRun(REPO, 'ci');
    const runnerId = sim.actions.registerRunner(scaleSetId, 'r-1');
    expect(sim.actions.removeRunner(runnerId)).toBe('removed');
    expect(sim.actions.removeRunner(runnerId)).toBe('not-found');
    expect(sim.actions.acquireJob('r-1')).toBeUndefined();
    expect(sim.actions.acquireJob('nobody')).toBeUndefined();
  });

  it('treats a new registration under a dead runner’s name as a new runner', () => {
    const { sim, scaleSetId } = buildWorld(simple);
    const first = sim.actions.registerRunner(scaleSetId, 'reused');
    sim.actions.runnerStopped('reused', 'killed');
    expect(sim.actions.acquireJob('reused')).toBeUndefined();
    expect(sim.actions.removeRunner(first)).toBe('removed');
    const second = sim.actions.registerRunner(scaleSetId, 'reused');
    expect(second).not.toBe(first);
    sim.triggerRun(REPO, 'ci');
    expect(sim.actions.acquireJob('reused')).toBeDefined();
  });

  it('starts a job only once all its needs succeeded, and skips it when one failed', async () => {
    const { sim, clock, startRunner } = buildWorld({
      name: 'ci',
      jobs: [
        { name: 'build', runsOn: SCALE_SET, durationMs: MINUTE },
        { name: 'lint', runsOn: SCALE_SET, durationMs: MINUTE, fails: {} },
        { name: 'test', runsOn: SCALE_SET, needs: ['build'], durationMs: MINUTE },
        { name: 'deploy', runsOn: SCALE_SET, needs: ['test', 'lint'] },
      ],
    });
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    expect(jobIds).toHaveLength(2);
    startRunner();
    startRunner();
    await clock.advance(MINUTE);
    const afterFirstWave = sim
      .jobs(runId)
      .map((job) => `${job.name}:${job.status}:${job.conclusion}`);
    expect(afterFirstWave).toEqual([
      'build:completed:success',
      'lint:completed:failure',
      'test:queued:null',
    ]);
    startRunner();
    await clock.advance(MINUTE);
    expect(sim.jobs(runId).map((job) => `${job.name}:${job.conclusion}`)).toEqual([
      'build:success',
      'lint:failure',
      'test:success',
      'deploy:skipped',
    ]);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(sim.job(jobIds[1] ?? 0)?.annotations.map((a) => a.message)).toEqual([
      'Process completed with exit code 1.',
    ]);
  });

  it('cancels the matrix siblings of a failed job when fail-fast is on, and leaves them alone when it is off', async () => {
    for (const failFast of [true, false]) {
      const { sim, clock, startRunner } = buildWorld({
        name: 'ci',
        jobs: [
          {
            name: 'test',
            runsOn: SCALE_SET,
            matrix: { node: [20, 22, 24] },
            failFast,
            durationMs: 10 * MINUTE,
            fails: { afterMs: MINUTE, matrix: { node: 22 } },
          },
        ],
      });
      const { runId } = sim.triggerRun(REPO, 'ci');
      startRunner();
      startRunner();
      await clock.advance(MINUTE);
      const outcome = sim.jobs(runId).map((job) => `${job.name}:${job.status}:${job.conclusion}`);
      expect(outcome).toEqual(
        failFast
          ? [
              'test (20):completed:cancelled',
              'test (22):completed:failure',
              'test (24):completed:cancelled',
            ]
          : ['test (20):in_progress:null', 'test (22):completed:failure', 'test (24):queued:null'],
      );
    }
  });

  it('fails a busy runner’s job at once with the shutdown annotation on SIGTERM', () => {
    const { sim, startRunner } = buildWorld(simple);
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const runner = startRunner();
    sim.actions.runnerStopped(runner.name, 'sigterm');
    const job = sim.job(jobIds[0] ?? 0);
    expect(job).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(job?.annotations.map((a) => a.message)).toEqual([
      'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.',
      'The operation was canceled.',
    ]);
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(sim.audit().at(-1)).toMatchObject({
      by: 'github',
      verb: 'fail-job',
      target: `repos/${REPO}/actions/jobs/${jobIds[0]}`,
    });
  });

  it('fails a killed runner’s job when its lock lapses, 576 s after the last renewal (GAG’s measured 9m36s), with "lost communication"', async () => {
    const { sim, clock, scaleSetId, startRunner } = buildWorld({
      name: 'ci',
      jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: HOUR }],
    });
    const { jobIds } = sim.triggerRun(REPO, 'ci');
    const jobId = jobIds[0] ?? 0;
    const runner = startRunner();
    await clock.advance(3 * MINUTE + 25_000);
    sim.actions.runnerStopped(runner.name, 'killed');
    sim.actions.runnerStopped(runner.name, 'killed');
    expect(sim.actions.removeRunner(runner.runnerId)).toBe('busy');
    expect(sim.actions.assignedJobCount(scaleSetId)).toBe(1);
    // Last renewal at 3:00, so the lock lapses at 12:36: 9 min 11 s after the kill.
    await clock.advance(9 * MINUTE + 10_000);
    expect(sim.job(jobId)?.status).toBe('in_progress');
    await clock.advance(1000);
    const job = sim.job(jobId);
    expect(job).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(job?.annotations.map((a) => a.message)).toEqual([
      `The self-hosted runner: ${runner.name} lost communication with the server. Verify the machine is running and has a healthy network connection. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.`,
    ]);
    expect(sim.actions.removeRunner(runner.runnerId)).toBe('not-found');
  });

  it('leaves a job nobody picks up queued, then GitHub cancels it after 24 hours', async () => {
    const { sim, clock, scaleSetId } = buildWorld(simple);
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    await clock.advance(24 * HOUR - 1);
    expect(sim.job(jobIds[0] ?? 0)).toMatchObject({ status: 'queued', runnerName: null });
    await clock.advance(1);
    expect(sim.job(jobIds[0] ?? 0)).toMatchObject({
      status: 'completed',
      conclusion: 'cancelled',
      runnerName: null,
    });
    expect(sim.run(runId)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    expect(sim.actions.assignedJobCount(scaleSetId)).toBe(0);
    expect(sim.audit().at(-1)).toMatchObject({
      by: 'github',
      verb: 'cancel-queued-job',
      at: clock.now(),
    });
  });

  it('deletes an ephemeral registration that never connected after a day', async () => {
    const { sim, clock, scaleSetId } = buildWorld(simple);
    const runnerId = sim.actions.registerRunner(scaleSetId, 'never-started');
    await clock.advance(24 * HOUR);
    expect(sim.actions.removeRunner(runnerId)).toBe('not-found');
  });

  it('holds a job with an environment rule in `waiting`, then queues it', async () => {
    const { sim, clock } = buildWorld({
      name: 'ci',
      jobs: [
        {
          name: 'deploy',
          runsOn: SCALE_SET,
          environment: { name: 'prod', approveAfterMs: MINUTE },
        },
      ],
    });
    const seen = eventsOf(sim);
    const { jobIds } = sim.triggerRun(REPO, 'ci');
    expect(sim.job(jobIds[0] ?? 0)?.status).toBe('waiting');
    await clock.advance(MINUTE);
    expect(sim.job(jobIds[0] ?? 0)?.status).toBe('queued');
    expect(seen).toEqual(['run:requested', 'deploy:waiting', 'deploy:queued']);
  });

  it('lets an idle runner know when a job is queued later', () => {
    const { sim, startRunner } = buildWorld({
      name: 'ci',
      jobs: [{ name: 'build', runsOn: SCALE_SET }],
    });
    const idle = startRunner();
    expect(idle.assignment).toBeUndefined();
    const taken: number[] = [];
    sim.onJobQueued(() => {
      const assignment = sim.actions.acquireJob(idle.name);
      if (assignment) taken.push(assignment.jobId);
    });
    const { jobIds } = sim.triggerRun(REPO, 'ci');
    expect(taken).toEqual(jobIds);
  });

  it('gives the same ids, GUIDs and event order for the same seed, and different ones for another seed', async () => {
    const play = async (seed: number) => {
      const clock = new SimClock();
      const sim = new GitHubSim({ clock, seed, privateKey: sharedKey });
      sim.createOrg(ORG);
      sim.createRepo(REPO);
      sim.createInstallation(ORG);
      sim.defineWorkflow(REPO, {
        name: 'ci',
        jobs: [{ name: 't', runsOn: SCALE_SET, matrix: { n: [1, 2] } }],
      });
      const set = sim.actions.registerScaleSet({ owner: ORG, name: SCALE_SET });
      const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
      sim.actions.registerRunner(set, 'r');
      sim.actions.acquireJob('r');
      await clock.advance(HOUR);
      return JSON.stringify({
        runId,
        jobIds,
        guids: sim.deliveries().map((d) => d.guid),
        bodies: sim.deliveries().map((d) => d.body),
      });
    };
    const sharedKey = buildWorld(simple).sim.app.privateKey;
    expect(await play(1)).toBe(await play(1));
    expect(await play(1)).not.toBe(await play(2));
  });
});

describe('GitHub twin: workflow definitions', () => {
  it.each([
    [
      [
        { name: 'a', runsOn: 'x' },
        { name: 'a', runsOn: 'x' },
      ],
      /job "a" is defined twice/,
    ],
    [[{ name: 'a', runsOn: 'x', needs: ['b'] }], /job "a" needs unknown job "b"/],
    [
      [
        { name: 'a', runsOn: 'x', needs: ['b'] },
        { name: 'b', runsOn: 'x', needs: ['a'] },
      ],
      /needs form a cycle: a -> b -> a/,
    ],
    [[{ name: 'a', runsOn: 'x', matrix: { os: [] } }], /job "a" has an empty matrix "os"/],
  ])('refuses a broken workflow with a clear error (%#)', (jobs, message) => {
    const { sim } = buildWorld({ name: 'ok', jobs: [] });
    expect(() => sim.defineWorkflow(REPO, { name: 'bad', jobs })).toThrow(message);
  });

  it('names matrix jobs as GitHub does, one per combination', () => {
    const { sim } = buildWorld({
      name: 'ci',
      jobs: [{ name: 'test', runsOn: SCALE_SET, matrix: { os: ['linux', 'arm'], node: [20, 22] } }],
    });
    const { runId } = sim.triggerRun(REPO, 'ci');
    expect(sim.jobs(runId).map((job) => job.name)).toEqual([
      'test (linux, 20)',
      'test (linux, 22)',
      'test (arm, 20)',
      'test (arm, 22)',
    ]);
  });
});
