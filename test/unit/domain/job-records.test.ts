import {
  erJobCacheEntry,
  erJobCacheOf,
  runnerOnNodeOf,
} from '../../../functions/domain/correlate/job-records.js';
import { er, pod } from './builders.js';
import { CLUSTER, NS, T0, erOwner } from './fixtures.js';

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

describe('a runner that took a job, on its node', () => {
  const busy = er({
    job: { jobRepositoryName: 'acme/app', workflowRunId: 5, jobDisplayName: 'build' },
  });

  it('is recorded with its placement and its job, and that record is its job cache', () => {
    const onNode = runnerOnNodeOf(busy, pod(), T0);
    expect(onNode).toMatchObject({
      cluster: CLUSTER,
      namespace: NS,
      name: busy.metadata.name,
      nodeName: 'pool-github-runners-3-ogny9',
      podUid: pod().metadata.uid,
      ephemeralRunnerUid: busy.metadata.uid,
      runnerId: 42,
      seenAt: T0,
    });
    expect(onNode && erJobCacheOf(onNode)).toEqual(erJobCacheEntry(busy, T0));
  });

  it.each([
    ['a pod not yet bound', busy, { ...pod(), nodeName: null }],
    [
      'a pod another EphemeralRunner owns',
      busy,
      pod({ ownerReferences: [{ ...erOwner(busy.metadata.name), uid: 'uid-er-other' }] }),
    ],
    [
      'a runner not owned by an EphemeralRunnerSet',
      er({
        ownerKind: 'Deployment',
        job: { jobRepositoryName: 'acme/app', workflowRunId: 5, jobDisplayName: 'b' },
      }),
      pod(),
    ],
  ])('is not recorded for %s', (_, e, p) => {
    expect(runnerOnNodeOf(e, p, T0)).toBeNull();
  });

  it('is placed without a job before ARC writes one into its EphemeralRunner: no job cache yet', () => {
    const onNode = runnerOnNodeOf(er(), pod(), T0);
    expect(onNode).toMatchObject({ nodeName: 'pool-github-runners-3-ogny9', runnerId: 42 });
    expect(onNode && 'job' in onNode).toBe(false);
    expect(onNode && erJobCacheOf(onNode)).toBeNull();
  });
});
