import { erJobCacheEntry } from '../../../functions/domain/correlate/job-records.js';
import { er } from './builders.js';
import { CLUSTER, NS, T0 } from './fixtures.js';

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
