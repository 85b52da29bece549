import { decide } from '../../../functions/domain/decide/decide.js';
import { parsePolicy } from '../../../functions/domain/policy/policy.js';
import { er, facts, job, record, unwrap, withEvent } from './builders.js';
import { T0 } from './fixtures.js';

const on = unwrap(
  parsePolicy(
    'rules: { hungJob: { enabled: true, graceSeconds: 600, forceCancelAfterSeconds: 300 } }',
  ),
);
const inProgress = job({ jobId: 401, status: 'in_progress', conclusion: null, completedAt: null });
const gone = withEvent(facts({ jobs: [inProgress], ephemeralRunners: [er()] }), {
  reason: 'Evicted',
  message: 'Evicted pod: Drifted',
  component: 'karpenter',
  at: T0,
});
const cancelKey = `cancel-run:acme/app:${inProgress.job.runId}:1:try:0`;

describe('a cancel whose outcome is unknown (timeout or 5xx, the run could not say)', () => {
  const unknownCancel = record({
    key: cancelKey,
    kind: 'cancel-run',
    rule: 'rule-4-hung-job',
    outcome: 'unknown',
    finishedAt: T0 + 600_000,
    jobIds: [401],
  });

  it('is not sent again, and is followed by the force-cancel as a sent one would be', () => {
    const f = { ...gone, actions: [unknownCancel] };
    const runActions = (now: number) =>
      decide(f, on, now)
        .actions.filter((a) => a.rule === 'rule-4-hung-job')
        .map((a) => a.target.kind);
    expect(runActions(T0 + 800_000)).toEqual([]);
    expect(runActions(T0 + 900_000)).toEqual(['force-cancel-run']);
  });
});
