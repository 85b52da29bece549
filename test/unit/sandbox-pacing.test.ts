import { SimClock } from '../../sim/clock.js';
import type { WallClock } from '../../sandbox/scenario/sandbox.js';
import { describeRemediation, paced } from '../../sandbox/scenario/sandbox.js';

/**
 * A simulated clock and a wall clock under the test's control, where every simulated step costs
 * `workMs` of real time.
 */
function clocks(workMs: number) {
  let now = 0;
  let sleeps = 0;
  const wall: WallClock = {
    now: () => now,
    sleep: (ms) => {
      sleeps++;
      now += ms;
      return Promise.resolve();
    },
  };
  const sim = new SimClock(0);
  const advance = sim.advanceTo.bind(sim);
  sim.advanceTo = async (at: number) => {
    now += workMs;
    await advance(at);
  };
  return { sim, wall, elapsed: () => now, sleeps: () => sleeps };
}

describe('the sandbox pace is honest', () => {
  it('plays an hour at 60x in a minute, absorbing the time the simulation itself takes', async () => {
    const { sim, wall, elapsed } = clocks(5);

    await paced(sim, 3_600_000, 60, wall);

    expect(sim.now()).toBe(3_600_000);
    // 3600 steps of 5 ms work each would add 18 s if work were slept on top of the pace.
    expect(elapsed()).toBeGreaterThanOrEqual(60_000);
    expect(elapsed()).toBeLessThan(60_000 + 20);
  });

  it('does not sleep when the simulation is slower than the pace, and still reaches the end', async () => {
    const { sim, wall, elapsed, sleeps } = clocks(50);

    await paced(sim, 100_000, 1000, wall);

    expect(sim.now()).toBe(100_000);
    expect(sleeps()).toBe(0);
    expect(elapsed()).toBe(100 * 50);
  });
});

describe('the sandbox story line of an audit event', () => {
  it('names the action, its subject, the outcome, the rule and the evidence', () => {
    expect(
      describeRemediation({
        action: 'rerun-failed-jobs',
        repository: 'acme/app',
        target: { kind: 'rerun-failed-jobs', repo: 'acme/app', runId: 42, jobIds: [1] },
        outcome: 'succeeded',
        rule: 'rule-3-rerun-killed-job',
        causeText: 'API eviction by karpenter',
        dryRun: false,
      }),
    ).toBe(
      'rerun-failed-jobs acme/app run 42 → succeeded  [rule-3-rerun-killed-job]  because API eviction by karpenter',
    );
  });

  it('says dry run rather than the recorded outcome when nothing was called', () => {
    expect(
      describeRemediation({
        action: 'delete-ephemeral-runner',
        runner: 'arc-linux-abc',
        target: { kind: 'delete-ephemeral-runner' },
        outcome: 'dry-run',
        rule: 'rule-1-free-poisoned-slot',
        reason: 'pod evicted',
        dryRun: true,
      }),
    ).toBe(
      'delete-ephemeral-runner arc-linux-abc → dry run  [rule-1-free-poisoned-slot]  because pod evicted',
    );
  });
});
