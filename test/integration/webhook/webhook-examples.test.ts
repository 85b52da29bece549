import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness } from '../../helpers/ingress-harness.js';

const harness = new IngressHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const jobExamples = examplesFor('workflow_job').map((example, index) => ({
  index,
  action: String(example.action),
  payload: asAppDelivery(example),
}));

describe('github-webhook with every workflow_job example from @octokit/webhooks-examples', () => {
  it.each(jobExamples)(
    'accepts example $index ($action), stores and publishes it',
    async ({ index, payload }) => {
      const deliveryId = `example-${index}`;
      const before = harness.eventBridge.entries.length;

      const result = await harness.deliver({
        event: 'workflow_job',
        body: JSON.stringify(payload),
        deliveryId,
      });

      expect(result).toEqual({ statusCode: 202, body: { status: 'accepted', deliveryId } });
      const published = harness.eventBridge.entries.slice(before);
      expect(published).toHaveLength(1);
      expect(published[0]?.Source).toBe('runner-medic');
      expect(published[0]?.EventBusName).toBe('runner-medic-test');
      const stored = (await harness.storedItems()).find((item) => item.deliveryId === deliveryId);
      expect(stored?.observation).toEqual(JSON.parse(published[0]?.Detail ?? 'null'));
    },
  );

  it('normalizes a queued example field by field, keeping ids above 2^31 exact', async () => {
    const example = examplesFor('workflow_job').find(
      (e) => e.action === 'queued' && (e.workflow_job as { status: string }).status === 'waiting',
    );
    const before = harness.eventBridge.entries.length;
    await harness.deliver({
      event: 'workflow_job',
      // A new delivery of the same event: GitHub's body differs (the ledger treats a repeated body
      // as a replay), here by a field runner-medic does not read.
      body: JSON.stringify({ ...example, test_tag: 'queued-1' }),
      deliveryId: 'queued-1',
    });

    const entry = harness.eventBridge.entries[before];
    expect(entry?.DetailType).toBe('GitHub Job Queued');
    expect(JSON.parse(entry?.Detail ?? '{}')).toEqual({
      kind: 'job.queued',
      deliveryId: 'queued-1',
      installationId: 23154469,
      receivedAt: '2026-03-01T12:00:00.000Z',
      repository: {
        id: 591427149,
        fullName: 'lineville/elastic-machines-testing',
        owner: 'lineville',
        name: 'elastic-machines-testing',
      },
      job: {
        jobId: 12877621891,
        runId: 4747967848,
        runAttempt: 1,
        name: 'test',
        workflowName: 'Env Test',
        headBranch: 'main',
        labels: ['self-hosted', 'k8s'],
        status: 'waiting',
        conclusion: null,
        runnerId: null,
        runnerName: null,
        runnerGroupId: null,
        runnerGroupName: null,
        htmlUrl:
          'https://github.com/lineville/elastic-machines-testing/actions/runs/4747967848/jobs/8433573014',
        createdAt: '2023-04-19T21:12:12Z',
        startedAt: '2023-04-19T21:12:12Z',
        completedAt: null,
      },
    });
  });

  it('normalizes an in_progress example with its runner as job.started', async () => {
    const example = examplesFor('workflow_job').find(
      (e) => (e.workflow_job as { id: number }).id === 14541957942,
    );
    const before = harness.eventBridge.entries.length;
    await harness.deliver({
      event: 'workflow_job',
      body: JSON.stringify({ ...example, test_tag: 'second' }),
      deliveryId: 'started-1',
    });

    const detail = JSON.parse(harness.eventBridge.entries[before]?.Detail ?? '{}');
    expect(harness.eventBridge.entries[before]?.DetailType).toBe('GitHub Job Started');
    expect(detail.kind).toBe('job.started');
    expect(detail.job.jobId).toBe(14541957942);
    expect(detail.job.runnerName).toBe('GitHub Actions 6');
    expect(detail.job.runnerId).toBe(6);
    expect(detail.installationId).toBe(3456996);
    expect(detail.repository.fullName).toBe('wolfy1339/github-events-schemas');
  });

  it('normalizes a completed example, adding the installation a real App delivery carries', async () => {
    const example = examplesFor('workflow_job').find((e) => e.action === 'completed');
    expect(example?.installation).toBeUndefined();
    const before = harness.eventBridge.entries.length;
    await harness.deliver({
      event: 'workflow_job',
      body: JSON.stringify({ ...asAppDelivery(example ?? {}), test_tag: 'third' }),
      deliveryId: 'completed-1',
    });

    const detail = JSON.parse(harness.eventBridge.entries[before]?.Detail ?? '{}');
    expect(detail).toMatchObject({
      kind: 'job.completed',
      installationId: 4242,
      job: {
        jobId: 289782451,
        runId: 2202229078,
        status: 'completed',
        runnerName: 'GitHub Actions 5',
      },
    });
    expect(detail.job.conclusion).toBe('failure');
  });

  it('accepts a workflow_run.completed that did not succeed, and ignores the rest', async () => {
    const runs = examplesFor('workflow_run').map(asAppDelivery);
    const succeeded = runs.find((r) => runConclusion(r) === 'success');
    runs.push({
      ...succeeded,
      workflow_run: { ...(succeeded?.workflow_run as object), conclusion: 'failure' },
    });
    const results = [];
    for (const [index, payload] of runs.entries()) {
      const before = harness.eventBridge.entries.length;
      results.push({
        action: payload.action,
        conclusion: runConclusion(payload),
        result: await harness.deliver({
          event: 'workflow_run',
          body: JSON.stringify(payload),
          deliveryId: `run-${index}`,
        }),
        published: harness.eventBridge.entries.length - before,
      });
    }
    for (const { action, conclusion, result, published } of results) {
      const wanted = action === 'completed' && conclusion !== 'success';
      expect(result.statusCode).toBe(202);
      expect(result.body.status).toBe(wanted ? 'accepted' : 'ignored');
      expect(published).toBe(wanted ? 1 : 0);
    }
    // The examples hold both: a run that succeeded (nothing to rescue) and one still to judge.
    expect(results.filter((r) => r.result.body.status === 'accepted').length).toBeGreaterThan(1);
    expect(results.some((r) => r.action === 'completed' && r.conclusion === 'success')).toBe(true);
  });
});

const runConclusion = (payload: Record<string, unknown>) =>
  (payload.workflow_run as { conclusion?: unknown } | undefined)?.conclusion;
