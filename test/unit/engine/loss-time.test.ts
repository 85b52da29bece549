import type { Action, ActionTarget } from '../../../functions/domain/model/action.js';
import { lossTime } from '../../../functions/engine/loss-time.js';
import { facts, job } from '../domain/builders.js';
import { CLUSTER, NS, T0, iso } from '../domain/fixtures.js';

/**
 * The loss time of an action dates its audit event, its LossToAction metric and the loss its
 * breaker counts. A job found lost through its annotations has no loss record: GitHub's failure
 * of the job dates it, whichever re-run names the job.
 */
const run = { repo: 'acme/app', installationId: 1, runId: 9_000_000_001, runAttempt: 1 };
const action = (target: ActionTarget): Action => ({
  key: 'k',
  rule: 'rule-3-rerun-killed-job',
  target,
  scope: {
    cluster: CLUSTER,
    namespace: NS,
    scaleSet: null,
    repo: run.repo,
    runnerName: null,
    jobUrl: null,
  },
  cause: null,
  signal: null,
  reason: 'test',
  dryRun: false,
  budgetKeys: [],
});
const failed = facts({ jobs: [job({ jobId: 401, completedAt: iso(T0 + 5_000) })] });

describe('lossTime: when the runner behind an action was lost', () => {
  it("a per-job re-run is dated by its job's failure, as a re-run of the failed jobs is", () => {
    expect(lossTime(action({ kind: 'rerun-job', jobId: 401, ...run }), failed)).toBe(T0 + 5_000);
    expect(lossTime(action({ kind: 'rerun-failed-jobs', jobIds: [401], ...run }), failed)).toBe(
      T0 + 5_000,
    );
  });

  it('no time for another job, nor for a job GitHub has not completed', () => {
    expect(lossTime(action({ kind: 'rerun-job', jobId: 402, ...run }), failed)).toBeNull();
    const running = facts({ jobs: [job({ jobId: 401, completedAt: null })] });
    expect(lossTime(action({ kind: 'rerun-job', jobId: 401, ...run }), running)).toBeNull();
  });
});
