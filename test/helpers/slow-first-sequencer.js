/**
 * jest's own order (last run's failures first, then the longest last time), with an estimate for
 * each file jest has no time for yet, as on a fresh clone. jest would otherwise run those first
 * and by file size, so the slowest files (a scenario shard is four lines long) would start last
 * and run alone on one core at the end.
 */
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds, roughly: the longer of a warm and a cold run of jest on 2 quiet cores (48d7440), for
 * the files over 4 s. Only their order matters: the suite is CPU-bound, and these follow CPU.
 */
const ESTIMATES = [
  // Their scenarios played with runner-medic, some through serve besides.
  [/test\/e2e\/scenarios-medic-shard-/, 60],
  [/test\/e2e\/scenarios-seeds\.test\.ts$/, 60],
  [/test\/integration\/engine\/steady-hour\.test\.ts$/, 45],
  [/test\/e2e\/npm-start-webhook\.test\.ts$/, 33],
  [/test\/e2e\/scenario-chaos-convergence\.test\.ts$/, 30],
  [/test\/serve\/serve-leader-kill-process\.test\.ts$/, 28],
  [/test\/infra\/template\.test\.ts$/, 25],
  [/test\/integration\/engine\/runners-on-node\.test\.ts$/, 25],
  [/test\/serve\/serve-process\.test\.ts$/, 24],
  [/test\/e2e\/scenario-chaos-safety\.test\.ts$/, 21],
  [/test\/serve\/serve-sandbox-cli\.test\.ts$/, 21],
  [/test\/prevent\/graceful-stop\.test\.ts$/, 18],
  [/test\/serve\/serve-dynamodb-store\.test\.ts$/, 18],
  [/test\/operate\/replay\.test\.ts$/, 16],
  [/test\/e2e\/forged-events\.property\.test\.ts$/, 15],
  [/test\/integration\/engine\/sweep-resume\.test\.ts$/, 15],
  [/test\/serve\/serve-leader-failover\.test\.ts$/, 14],
  [/test\/serve\/serve-probes\.test\.ts$/, 12],
  [/test\/integration\/store\/breaker-burst\.property\.test\.ts$/, 11],
  [/test\/doctor\/doctor-cli\.test\.ts$/, 10],
  [/test\/unit\/handler-reach\.test\.ts$/, 9],
  [/test\/integration\/engine\/rerun-killed-job\.test\.ts$/, 9],
  [/test\/integration\/engine\/orphan-scan-cadence\.test\.ts$/, 8],
  [/test\/operate\/check-runs\.test\.ts$/, 8],
  [/test\/e2e\/scenarios-arc-alone-shard-/, 7],
  [/test\/doctor\/doctor-in-cluster\.test\.ts$/, 7],
  [/test\/integration\/engine\/discover-queued-jobs\.test\.ts$/, 7],
  [/test\/integration\/engine\/(per-event-cost|two-clusters)\.test\.ts$/, 6],
  [/test\/unit\/domain\/decide\.property\.test\.ts$/, 6],
  [/test\/infra\/container-entrypoint\.test\.ts$/, 6],
  [/test\/sim\/kube\/structural-schema\.test\.ts$/, 6],
  [/test\/integration\/engine\/(breaker-state|sweep-queued-namespaces|audit-outbox)\.test\.ts$/, 5],
  [/test\/e2e\/npm-run-twin\.test\.ts$/, 5],
  [/test\/operate\/rescue\.test\.ts$/, 5],
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
