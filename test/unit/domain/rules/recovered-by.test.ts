import type { Action } from '../../../../functions/domain/model/action.js';
import { decide } from '../../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../../../functions/domain/policy/policy.js';
import { remediationEvent } from '../../../../functions/engine/remediation-event.js';
import { RUN_ID, er, facts, job, record, run } from '../builders.js';
import { CLUSTER, LOST_ANNOTATION, NS, SHUTDOWN_ANNOTATION, T0 } from '../fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const cached = {
  cluster: CLUSTER,
  namespace: NS,
  runnerName: NAME,
  scaleSet: 'arc-runner-set',
  runnerId: 42,
  job: {
    jobId: 'guid-1',
    jobRequestId: 7,
    jobRepositoryName: 'acme/app',
    jobWorkflowRef: null,
    workflowRunId: RUN_ID,
    jobDisplayName: 'build',
  },
  seenAt: T0 - 500_000,
};
const failure = (message: string) => [{ annotation_level: 'failure', message }];
const world = (o: Partial<Facts>): Facts =>
  facts({ erJobCache: [cached], ephemeralRunners: [er()], runs: [run()], ...o });
const rerunOf = (f: Facts) =>
  decide(f, DEFAULT_POLICY, T0 + 120_000).actions.find(
    (a) => a.target.kind === 'rerun-failed-jobs',
  );

describe('which path recovered a lost job, in the re-run and its audit event', () => {
  it('fast-path: runner-medic cancelled the run of a runner the cluster showed dead', () => {
    const cancelled = job(
      { jobId: 101, conclusion: 'cancelled' },
      failure('The operation was canceled.'),
    );
    const f = world({
      jobs: [cancelled],
      actions: [
        record({
          key: `cancel-run:acme/app:${RUN_ID}:1:try:0`,
          kind: 'force-cancel-run',
          rule: 'rule-4-hung-job',
          jobIds: [101],
        }),
      ],
      runs: [run({ conclusion: 'cancelled' })],
    });
    const rerun = rerunOf(f);
    expect(rerun?.recoveredBy).toBe('fast-path');
    const detail =
      rerun && (remediationEvent(rerun, 'succeeded', 'done', T0).detail as Record<string, unknown>);
    expect(detail?.['recoveredBy']).toBe('fast-path');
  });

  it('lock-expiry: GitHub failed the job when the dead runner’s lock lapsed', () => {
    expect(
      rerunOf(world({ jobs: [job({ jobId: 101 }, failure(LOST_ANNOTATION))] }))?.recoveredBy,
    ).toBe('lock-expiry');
  });

  it('graceful: the runner reported its shutdown', () => {
    expect(
      rerunOf(world({ jobs: [job({ jobId: 101 }, failure(SHUTDOWN_ANNOTATION))] }))?.recoveredBy,
    ).toBe('graceful');
  });

  it('is left out of the audit event of actions that recover nothing', () => {
    const rerun = rerunOf(world({ jobs: [job({ jobId: 101 }, failure(LOST_ANNOTATION))] }));
    if (!rerun) throw new Error('expected a re-run');
    const cancel: Action = {
      ...rerun,
      recoveredBy: undefined,
      target: {
        kind: 'cancel-run',
        repo: 'acme/app',
        installationId: 77,
        runId: RUN_ID,
        runAttempt: 1,
        jobIds: [101],
        allowLiveJobs: false,
      },
    };
    expect(remediationEvent(cancel, 'succeeded', 'done', T0).detail).not.toHaveProperty(
      'recoveredBy',
    );
  });
});
