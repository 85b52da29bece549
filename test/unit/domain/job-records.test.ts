import {
  erJobCacheEntry,
  jobRecordsFrom,
  runRecordsFrom,
} from '../../../functions/domain/correlate/job-records.js';
import type {
  GithubObservation,
  JobObservation,
} from '../../../functions/domain/model/observation.js';
import { REPO, er, job, run } from './builders.js';
import { CLUSTER, NS, T0, iso } from './fixtures.js';

const obs = (
  kind: JobObservation['kind'],
  status: string,
  attempt: number,
  receivedAt: number,
): JobObservation => ({
  kind,
  deliveryId: `d-${kind}-${attempt}-${receivedAt}`,
  installationId: 77,
  repository: REPO,
  receivedAt: iso(receivedAt),
  job: {
    ...job({
      jobId: 700,
      status,
      runAttempt: attempt,
      conclusion: status === 'completed' ? 'failure' : null,
    }).job,
  },
});

describe('jobRecordsFrom', () => {
  it.each<[string, JobObservation[], string, number]>([
    [
      'in order',
      [
        obs('job.queued', 'queued', 1, T0),
        obs('job.started', 'in_progress', 1, T0 + 1),
        obs('job.completed', 'completed', 1, T0 + 2),
      ],
      'completed',
      1,
    ],
    [
      'completed arrives before started',
      [obs('job.completed', 'completed', 1, T0), obs('job.started', 'in_progress', 1, T0 + 1)],
      'completed',
      1,
    ],
    [
      'a later attempt wins over a completed earlier one',
      [obs('job.completed', 'completed', 1, T0 + 5), obs('job.queued', 'queued', 2, T0)],
      'queued',
      2,
    ],
  ])('%s', (_, list, status, attempt) => {
    const [r, ...rest] = jobRecordsFrom(list);
    expect(rest).toEqual([]);
    expect(r?.job.status).toBe(status);
    expect(r?.job.runAttempt).toBe(attempt);
    expect(r?.annotations).toBeNull();
  });

  it('attaches annotations read for a job, and collects completed runs', () => {
    const runObs: GithubObservation = {
      kind: 'run.completed',
      deliveryId: 'r',
      installationId: 77,
      repository: REPO,
      receivedAt: iso(T0),
      run: run().run,
    };
    const list: GithubObservation[] = [obs('job.completed', 'completed', 1, T0), runObs];
    const anno = [{ annotation_level: 'failure', message: 'x' }];
    expect(jobRecordsFrom(list, new Map([[700, anno]]))[0]?.annotations).toEqual(anno);
    expect(runRecordsFrom(list).map((r) => r.run.status)).toEqual(['completed']);
  });
});

describe('erJobCacheEntry', () => {
  it.each([
    [
      'an ARC runner with a job',
      er({ job: { jobRepositoryName: 'acme/app', workflowRunId: 5, jobDisplayName: 'build' } }),
      true,
    ],
    ['an ARC runner without a job', er(), false],
    [
      'a runner not owned by an EphemeralRunnerSet',
      er({
        ownerKind: 'Deployment',
        job: { jobRepositoryName: 'acme/app', workflowRunId: 5, jobDisplayName: 'b' },
      }),
      false,
    ],
  ])('%s → cached: %s', (_, e, cached) => {
    const entry = erJobCacheEntry(e, T0);
    expect(entry !== null).toBe(cached);
    if (entry)
      expect(entry).toMatchObject({
        cluster: CLUSTER,
        namespace: NS,
        scaleSet: 'arc-runner-set',
        runnerId: 42,
        seenAt: T0,
      });
  });
});
