import { BASELINE_TIMEOUT_MS, play, scenarioFiles } from './scenario-play.js';

describe('scenarios, ARC alone (--without-remediation): the baseline every figure is compared to', () => {
  it.each(scenarioFiles())(
    '%s ends exactly as ARC alone leaves it',
    async (file) => {
      const outcome = await play(file, false);

      expect(outcome.failedExpectations).toEqual([]);
      expect(outcome.violations).toEqual([]);
      expect(outcome.actions.filter((a) => a.by === 'runner-medic')).toEqual([]);
      expect(outcome.passed).toBe(true);
    },
    BASELINE_TIMEOUT_MS,
  );
});
