import { findRunnerLoss } from '../../../functions/domain/classify/annotations.js';
import type { RepoRef } from '../../../functions/ports/github-gateway.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

const shards = Array.from({ length: 130 }, (_, i) => i + 1);
const ciWorkflow = {
  name: 'ci',
  jobs: [
    { name: 'build', runsOn: SCALE_SET, durationMs: 5 * MINUTE },
    { name: 'lint', runsOn: SCALE_SET, durationMs: MINUTE, fails: { step: 'eslint' } },
  ],
};

describe('GithubGateway reads jobs, runs and annotations from the GitHub twin', () => {
  const world = buildWorld(ciWorkflow);
  const fresh = buildWorld(ciWorkflow, { privateKey: world.sim.app.privateKey });
  const wide = buildWorld(
    { name: 'shards', jobs: [{ name: 'shard', runsOn: SCALE_SET, matrix: { n: shards } }] },
    { privateKey: world.sim.app.privateKey },
  );
  const { sim, startRunner, installationId } = world;
  const ref: RepoRef = { repo: REPO, installationId };
  beforeAll(async () => {
    await Promise.all([sim.start(), fresh.sim.start(), wide.sim.start()]);
  });
  afterAll(async () => {
    await Promise.all([sim.stop(), fresh.sim.stop(), wide.sim.stop()]);
  });

  it('gets a job and a run as domain facts, with ids above 2^31 kept exact', async () => {
    const gateway = gatewayFor(sim);
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const buildId = jobIds[0] ?? 0;
    const runner = startRunner();
    expect(buildId).toBeGreaterThan(2 ** 31);

    const job = await gateway.getJob(ref, buildId);
    const simJob = sim.job(buildId);
    expect(job).toEqual({
      jobId: buildId,
      runId,
      runAttempt: 1,
      name: 'build',
      workflowName: 'ci',
      headBranch: 'main',
      labels: [SCALE_SET],
      status: 'in_progress',
      conclusion: null,
      runnerId: runner.runnerId,
      runnerName: runner.name,
      runnerGroupId: simJob?.runnerGroupId,
      runnerGroupName: simJob?.runnerGroupName,
      htmlUrl: `https://github.com/${REPO}/actions/runs/${runId}/job/${buildId}`,
      createdAt: new Date(simJob?.createdAt ?? 0).toISOString().replace('.000', ''),
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      completedAt: null,
    });
    expect(served(sim).at(-1)).toBe(`GET /repos/${REPO}/actions/jobs/${buildId} 200`);

    expect(await gateway.getRun(ref, runId)).toEqual({
      runId,
      runAttempt: 1,
      name: 'ci',
      status: 'in_progress',
      conclusion: null,
      event: 'push',
      htmlUrl: `https://github.com/${REPO}/actions/runs/${runId}`,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      runStartedAt: expect.any(String),
    });
    expect(await gateway.getJob(ref, buildId + 1_000_000)).toBeNull();
    expect(await gateway.getRun(ref, runId + 1_000_000)).toBeNull();
  });

  it('lists the latest attempt’s jobs and reads a job’s annotations', async () => {
    const { sim, clock, startRunner, installationId } = fresh;
    const ref: RepoRef = { repo: REPO, installationId };
    const gateway = gatewayFor(sim);
    const { runId } = sim.triggerRun(REPO, 'ci');
    const builder = startRunner();
    startRunner();
    await clock.advance(MINUTE);
    sim.actions.runnerStopped(builder.name, 'sigterm');
    const jobs = await gateway.listJobs(ref, runId);
    expect(jobs.map((j) => `${j.name}#${j.runAttempt}:${j.status}:${j.conclusion}`)).toEqual([
      'build#1:completed:failure',
      'lint#1:completed:failure',
    ]);
    const [build, lint] = jobs;

    const lost = await gateway.listAnnotations(ref, build?.jobId ?? 0);
    expect(lost).toEqual([
      expect.objectContaining({
        annotation_level: 'failure',
        path: '.github',
        message: expect.stringMatching(/^The runner has received a shutdown signal\./),
      }),
      expect.objectContaining({ message: 'The operation was canceled.' }),
    ]);
    expect(findRunnerLoss(lost)?.signal).toBe('shutdown-signal');

    const genuine = await gateway.listAnnotations(ref, lint?.jobId ?? 0);
    expect(genuine.map((a) => a.message)).toEqual(['Process completed with exit code 1.']);
    expect(findRunnerLoss(genuine)).toBeNull();

    await clock.advance(MINUTE);
    expect(sim.run(runId)?.status).toBe('completed');
    sim.rerunFailedJobs(runId);
    const latest = await gateway.listJobs(ref, runId);
    expect(latest.map((j) => `${j.name}#${j.runAttempt}:${j.status}`)).toEqual([
      'build#2:queued',
      'lint#2:queued',
    ]);
    expect(latest.map((j) => j.jobId)).not.toContain(build?.jobId);
    expect(await gateway.listJobs(ref, runId + 1_000_000)).toEqual([]);
    expect(await gateway.listAnnotations(ref, 2 ** 40)).toEqual([]);
  });

  it('pages through more than 100 jobs with per_page=100', async () => {
    const gateway = gatewayFor(wide.sim);
    const { runId, jobIds } = wide.sim.triggerRun(REPO, 'shards');
    expect(jobIds).toHaveLength(shards.length);
    const from = wide.sim.requests().length;
    const jobs = await gateway.listJobs({ repo: REPO, installationId: wide.installationId }, runId);
    expect(jobs.map((j) => j.jobId)).toEqual(jobIds);
    expect(jobs.at(-1)?.name).toBe('shard (130)');
    const pages = wide.sim
      .requests()
      .slice(from)
      .filter((r) => r.path.endsWith(`/runs/${runId}/jobs`));
    expect(pages.map((r) => r.status)).toEqual([200, 200]);
  });
});
