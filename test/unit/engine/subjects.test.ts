import {
  subjectFromKey,
  subjectKey,
  subjectsOf,
  type Subject,
} from '../../../functions/engine/subjects.js';

describe('subjects', () => {
  it.each<Subject>([
    { kind: 'runner', cluster: 'prod', namespace: 'arc', name: 'arc-linux-x-runner-a' },
    { kind: 'runner-name', name: 'arc-linux-x-runner-a' },
    { kind: 'job', repo: 'acme/app', jobId: 42 },
    { kind: 'run', repo: 'acme/app', runId: 9_000_000_001 },
    { kind: 'node', cluster: 'prod', nodeName: 'ip-10-0-1-17' },
    { kind: 'instance', instanceId: 'i-0abc' },
    { kind: 'namespace', cluster: 'prod', namespace: 'arc' },
  ])('keeps %o through its key', (s) => {
    expect(subjectFromKey(subjectKey(s))).toEqual(s);
  });

  it('drops a key it does not know rather than throwing', () => {
    expect(subjectFromKey('gone|x')).toBeNull();
    expect(subjectFromKey('job|acme/app|not-a-number')).toBeNull();
  });

  it('names a job, its run and its runner for a job webhook; nothing for a sweep or a wake', () => {
    const subjects = subjectsOf({
      kind: 'observation',
      observation: {
        kind: 'job.completed',
        deliveryId: 'd',
        installationId: 1,
        repository: { id: 1, fullName: 'acme/app', owner: 'acme', name: 'app' },
        receivedAt: '2026-03-01T12:00:00Z',
        job: {
          jobId: 42,
          runId: 7,
          runAttempt: 1,
          name: 'build',
          workflowName: 'CI',
          headBranch: 'main',
          labels: ['arc-linux'],
          status: 'completed',
          conclusion: 'failure',
          runnerId: 3,
          runnerName: 'arc-linux-x-runner-a',
          runnerGroupId: null,
          runnerGroupName: null,
          htmlUrl: 'https://github.com/acme/app/actions/runs/7/job/42',
          createdAt: null,
          startedAt: null,
          completedAt: null,
        },
      },
    });
    expect(subjects).toEqual([
      { kind: 'job', repo: 'acme/app', jobId: 42 },
      { kind: 'run', repo: 'acme/app', runId: 7 },
      { kind: 'runner-name', name: 'arc-linux-x-runner-a' },
    ]);
    expect(subjectsOf({ kind: 'sweep' })).toEqual([]);
    expect(subjectsOf({ kind: 'wake' })).toEqual([]);
  });
});
