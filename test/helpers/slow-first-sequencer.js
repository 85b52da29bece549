/**
 * jest's own order (last run's failures first, then the longest last time), with an estimate for
 * each file jest has no time for yet, as on a fresh clone. jest would otherwise run those first
 * and by file size, so the slowest files (a scenario shard is four lines long) would start last
 * and run alone on one core at the end.
 */
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds, roughly, on 2 quiet cores (the wall times of one run on a shared machine, scaled by
 * its load); only their order matters. Since the twins' watches stopped waiting real seconds the
 * suite is CPU-bound, and these follow CPU.
 */
const ESTIMATES = [
  // Their scenarios played with runner-medic, seven of them through serve besides.
  [/test\/e2e\/scenarios-medic-shard-/, 80],
  [/test\/infra\/template\.test\.ts$/, 70],
  [/test\/e2e\/scenarios-seeds\.test\.ts$/, 60],
  [/test\/e2e\/scenario-chaos-convergence\.test\.ts$/, 40],
  [/test\/serve\/serve-(sandbox-cli|probes)\.test\.ts$/, 40],
  [/test\/integration\/engine\/steady-hour\.test\.ts$/, 30],
  [/test\/serve\/serve-leader-failover\.test\.ts$/, 25],
  [/test\/serve\/serve-process\.test\.ts$/, 15],
  [/test\/e2e\/npm-start-webhook\.test\.ts$/, 25],
  [/test\/integration\/engine\/sweep-resume\.test\.ts$/, 25],
  [/test\/operate\/check-runs\.test\.ts$/, 20],
  [/test\/integration\/engine\/runners-on-node\.test\.ts$/, 20],
  [/test\/e2e\/scenario-chaos-safety\.test\.ts$/, 20],
  [/test\/operate\/replay\.test\.ts$/, 15],
  [/test\/e2e\/forged-events\.property\.test\.ts$/, 15],
  [/test\/doctor\/doctor-cli\.test\.ts$/, 12],
  [/test\/integration\/engine\/per-event-cost\.test\.ts$/, 10],
  [/test\/operate\//, 10],
  [/test\/integration\/engine\/rerun-killed-job\.test\.ts$/, 8],
  [/test\/e2e\/npm-run-twin\.test\.ts$/, 8],
  [/test\/e2e\/scenarios-arc-alone-shard-/, 8],
  [/test\/sim\/kube\//, 8],
  // 60 sweeps: 80 s while each waited a real second for its watch's bookmark, 5 s since.
  [/test\/integration\/engine\/orphan-scan-cadence\.test\.ts$/, 5],
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
