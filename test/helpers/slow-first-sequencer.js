/**
 * jest's own order (last run's failures first, then the longest last time), with an estimate for
 * each file jest has no time for yet, as on a fresh clone. jest would otherwise run those first
 * and by file size, so the slowest files (a scenario shard is four lines long) would start last
 * and run alone on one core at the end.
 */
import Sequencer from '@jest/test-sequencer';

/** Seconds of CPU each took on its own (`time npx jest <file> -i`); only the order matters. */
const ESTIMATES = [
  [/test\/e2e\/scenarios-arc-alone-shard-/, 120],
  [/test\/e2e\/scenarios-medic-shard-/, 120],
  [/test\/e2e\/scenarios-seeds\.test\.ts$/, 110],
  [/test\/e2e\/scenario-chaos-/, 100],
  [/test\/infra\/template\.test\.ts$/, 90],
  [/test\/integration\/engine\/sweep-resume\.test\.ts$/, 80],
  [/test\/integration\/engine\/per-event-cost\.test\.ts$/, 60],
  [/test\/e2e\/npm-start-webhook\.test\.ts$/, 50],
  [/test\/e2e\/npm-run-twin\.test\.ts$/, 40],
  [/test\/doctor\/doctor-cli\.test\.ts$/, 40],
  [/test\/integration\/engine\/runners-on-node\.test\.ts$/, 40],
  [/test\/e2e\/forged-events\.property\.test\.ts$/, 30],
  [/test\/operate\//, 30],
];

export default class SlowFirstSequencer extends Sequencer {
  /** Milliseconds: jest's record of the last run, else the estimate, else a millisecond a byte. */
  time(test) {
    const known = super.time(test);
    if (known != null) return known;
    const estimate = ESTIMATES.find(([pattern]) => pattern.test(test.path));
    return estimate ? estimate[1] * 1000 : (test.context.hasteFS.getSize(test.path) ?? 0);
  }
}
