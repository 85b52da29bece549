import {
  githubJobSchema,
  githubRunSchema,
  toJobFacts,
  toRunFacts,
} from '../../../functions/domain/model/github-objects.js';
import {
  DETAIL_TYPES,
  githubObservationSchema,
  type GithubObservation,
} from '../../../functions/domain/model/observation.js';
import { REPO, job, run } from './builders.js';
import { T0, iso } from './fixtures.js';

const observation: GithubObservation = {
  kind: 'job.completed',
  deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  installationId: 77,
  repository: REPO,
  receivedAt: iso(T0),
  job: job({ jobId: 700 }).job,
};

describe('githubObservationSchema: the one definition of an observation', () => {
  it('reads back what the webhook ingress writes, job and run alike', () => {
    expect(githubObservationSchema.parse(observation)).toEqual(observation);
    const runDone: GithubObservation = {
      kind: 'run.completed',
      deliveryId: observation.deliveryId,
      installationId: 77,
      repository: REPO,
      receivedAt: observation.receivedAt,
      run: run().run,
    };
    expect(githubObservationSchema.parse(runDone)).toEqual(runDone);
  });

  it.each<[string, unknown, string]>([
    [
      'an attempt beyond any real run',
      { job: { ...observation.job, runAttempt: 1001 } },
      'job.runAttempt',
    ],
    [
      'a repository name longer than GitHub allows',
      { repository: { ...REPO, name: 'x'.repeat(101) } },
      'repository.name',
    ],
    ['an id past 2^53', { installationId: 2 ** 53 }, 'installationId'],
    ['a delivery id far longer than a UUID', { deliveryId: 'd'.repeat(129) }, 'deliveryId'],
    ['a kind runner-medic never writes', { kind: 'job.vanished' }, 'kind'],
  ])('rejects %s, naming the field', (_, patch, path) => {
    const r = githubObservationSchema.safeParse({ ...observation, ...(patch as object) });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path);
  });

  it('has an EventBridge detail-type for every kind, and no other', () => {
    const kinds = githubObservationSchema.unwrap().options.map((o) => o.shape.kind.value);
    expect(Object.keys(DETAIL_TYPES).sort()).toEqual([...kinds].sort());
    expect(new Set(Object.values(DETAIL_TYPES)).size).toBe(kinds.length);
  });
});

describe('GitHub job and run objects → facts', () => {
  const restJob = {
    id: 700,
    run_id: 9_000_000_001,
    name: 'build',
    labels: ['arc-runner-set'],
    status: 'in_progress',
    conclusion: null,
    html_url: null,
    started_at: '2026-12-02T10:00:05Z',
  };

  it('a job from GitHub oldest payloads: first attempt, created at its start, no url', () => {
    expect(toJobFacts(githubJobSchema.parse(restJob))).toEqual({
      jobId: 700,
      runId: 9_000_000_001,
      runAttempt: 1,
      name: 'build',
      workflowName: null,
      headBranch: null,
      labels: ['arc-runner-set'],
      status: 'in_progress',
      conclusion: null,
      runnerId: null,
      runnerName: null,
      runnerGroupId: null,
      runnerGroupName: null,
      htmlUrl: '',
      createdAt: '2026-12-02T10:00:05Z',
      startedAt: '2026-12-02T10:00:05Z',
      completedAt: null,
    });
  });

  it('a complete job keeps its own creation time and runner', () => {
    const facts = toJobFacts(
      githubJobSchema.parse({
        ...restJob,
        run_attempt: 2,
        workflow_name: 'ci',
        head_branch: 'main',
        runner_id: 42,
        runner_name: 'arc-runner-set-2fh9q-runner-tkvlz',
        runner_group_id: 1,
        runner_group_name: 'Default',
        html_url: 'https://github.com/acme/app/actions/runs/1/job/700',
        created_at: '2026-12-02T10:00:00Z',
        completed_at: '2026-12-02T10:05:00Z',
      }),
    );
    expect(facts).toMatchObject({
      runAttempt: 2,
      workflowName: 'ci',
      runnerId: 42,
      runnerGroupName: 'Default',
      createdAt: '2026-12-02T10:00:00Z',
      completedAt: '2026-12-02T10:05:00Z',
    });
  });

  it('a run, with and without its optional fields', () => {
    const base = {
      id: 1,
      status: 'completed',
      conclusion: 'failure',
      html_url: 'https://github.com/acme/app/actions/runs/1',
      created_at: '2026-12-02T10:00:00Z',
      updated_at: '2026-12-02T10:09:00Z',
    };
    expect(toRunFacts(githubRunSchema.parse(base))).toEqual({
      runId: 1,
      runAttempt: 1,
      name: null,
      status: 'completed',
      conclusion: 'failure',
      event: null,
      htmlUrl: base.html_url,
      createdAt: base.created_at,
      updatedAt: base.updated_at,
      runStartedAt: null,
    });
    expect(
      toRunFacts(
        githubRunSchema.parse({
          ...base,
          run_attempt: 3,
          name: 'ci',
          event: 'push',
          run_started_at: '2026-12-02T10:01:00Z',
        }),
      ),
    ).toMatchObject({
      runAttempt: 3,
      name: 'ci',
      event: 'push',
      runStartedAt: '2026-12-02T10:01:00Z',
    });
  });
});
