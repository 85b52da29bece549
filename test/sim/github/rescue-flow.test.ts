import { createAppAuth } from '@octokit/auth-app';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MINUTE, REPO, RestOctokit, SCALE_SET, buildWorld } from './sim-fixture.js';

const [owner, repo] = REPO.split('/') as [string, string];
const SECRET = 'rescue';

describe('GitHub twin end to end: a webhook receiver re-runs a job lost with its runner', () => {
  it('delivers workflow_run.completed, accepts the re-run made from inside the handler, and runs the new attempt', async () => {
    const { sim, clock, installationId, startRunner } = buildWorld({
      name: 'ci',
      jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 30 * MINUTE }],
    });
    const baseUrl = await sim.start();
    const medic = new RestOctokit({
      baseUrl,
      authStrategy: createAppAuth,
      auth: { appId: sim.app.appId, privateKey: sim.app.privateKey, installationId },
    });
    const webhooks = new Webhooks({ secret: SECRET });
    const reruns: number[] = [];
    webhooks.on('workflow_run.completed', async ({ payload }) => {
      if (payload.workflow_run.conclusion !== 'failure') return;
      const { status } = await medic.rest.actions.reRunWorkflowFailedJobs({
        owner,
        repo,
        run_id: payload.workflow_run.id,
      });
      reruns.push(status);
    });
    const receiver = createServer(createNodeMiddleware(webhooks, { path: '/' }));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    sim.setWebhookTarget({
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
      secret: SECRET,
    });
    try {
      const { runId } = sim.triggerRun(REPO, 'ci');
      const doomed = startRunner();
      await clock.advance(4 * MINUTE + 30_000);
      sim.actions.runnerStopped(doomed.name, 'killed');
      const lostAt = clock.now();
      await clock.advance(9 * MINUTE);
      expect(reruns).toEqual([]);
      await clock.advance(MINUTE);
      expect(reruns).toEqual([201]);
      const rerunAt = sim.audit().find((e) => e.verb === 'rerun-failed-jobs')?.at ?? 0;
      // Killed at 4:30, last renewal 4:00: the 576 s lock lapses at 13:36.
      expect(rerunAt - lostAt).toBe(9 * MINUTE + 6_000);
      expect(sim.run(runId)).toMatchObject({ attempt: 2, status: 'queued' });

      const healthy = startRunner();
      expect(healthy.assignment).toMatchObject({ runId, runAttempt: 2 });
      await clock.advance(30 * MINUTE);
      expect(sim.run(runId)).toMatchObject({
        attempt: 2,
        status: 'completed',
        conclusion: 'success',
      });
      expect(sim.deliveries().every((d) => d.statusCode === 200)).toBe(true);
      expect(sim.deliveries().map((d) => `${d.event}.${d.action}`)).toEqual([
        'workflow_run.requested',
        'workflow_job.queued',
        'workflow_run.in_progress',
        'workflow_job.in_progress',
        'workflow_job.completed',
        'workflow_run.completed',
        'workflow_run.requested',
        'workflow_job.queued',
        'workflow_run.in_progress',
        'workflow_job.in_progress',
        'workflow_job.completed',
        'workflow_run.completed',
      ]);
      expect(
        sim
          .audit()
          .filter((e) => e.by === 'runner-medic')
          .map((e) => `${e.verb}:${e.status}`),
      ).toEqual(['rerun-failed-jobs:201']);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await sim.stop();
    }
  });
});
