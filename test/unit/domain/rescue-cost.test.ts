import {
  cleanupCallBound,
  RESCUE_CALLS,
  RUNNER_CLEANUP_CALLS,
  rescueCallBound,
} from '../../../functions/domain/policy/rescue-cost.js';

describe('what one rescue costs in mutating calls', () => {
  it('is a re-run for a graceful loss or a hung job, and cancel, force-cancel, re-run for a hard kill', () => {
    expect(RESCUE_CALLS).toEqual({
      graceful: ['rerun-failed-jobs'],
      'hard-kill': ['cancel-run', 'force-cancel-run', 'rerun-failed-jobs'],
      'hung-job': ['rerun-failed-jobs'],
    });
  });

  it('bounds a job by its budget times the costliest shape its losses took, and a job never lost by 0', () => {
    expect(rescueCallBound(2, ['graceful', 'graceful', 'graceful'])).toBe(2);
    expect(rescueCallBound(2, ['graceful', 'hard-kill'])).toBe(6);
    expect(rescueCallBound(1, ['hung-job'])).toBe(1);
    expect(rescueCallBound(2, [])).toBe(0);
  });

  it('lets each lost runner cost its clean-up, one call of each kind, rescued or not', () => {
    expect(RUNNER_CLEANUP_CALLS).toEqual([
      'delete-ephemeral-runner',
      'delete-pod',
      'remove-finalizer',
      'delete-runner-registration',
    ]);
    expect(cleanupCallBound(3)).toBe(12);
    expect(cleanupCallBound(0)).toBe(0);
  });
});
