import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createKubeClusterTwin } from '../../sim/scenario/kube-cluster-twin.js';
import type { ScenarioOutcome } from '../../sim/scenario/outcome.js';
import { runScenario } from '../../sim/scenario/run-scenario.js';
import { loadScenario } from '../../sim/scenario/scenario-schema.js';

const dir = 'test/scenarios';
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

async function play(file: string, remediation: boolean): Promise<ScenarioOutcome> {
  const scenario = await loadScenario(join(dir, file));
  return runScenario(scenario, { remediation, createCluster: createKubeClusterTwin });
}

describe('scenarios, ARC alone (--without-remediation): the baseline every figure is compared to', () => {
  it.each(files)(
    '%s ends exactly as ARC alone leaves it',
    async (file) => {
      const outcome = await play(file, false);

      expect(outcome.failedExpectations).toEqual([]);
      expect(outcome.violations).toEqual([]);
      expect(outcome.actions.filter((a) => a.by === 'runner-medic')).toEqual([]);
      expect(outcome.passed).toBe(true);
    },
    120_000,
  );
});

describe('scenarios with runner-medic: its real handlers driven by the simulators', () => {
  it.each(files)(
    '%s meets its expectations with no invariant violated',
    async (file) => {
      const outcome = await play(file, true);

      expect(outcome.failedExpectations).toEqual([]);
      expect(outcome.violations).toEqual([]);
      expect(outcome.errors).toEqual([]);
      expect(outcome.passed).toBe(true);
    },
    180_000,
  );

  it('recovers both seeds: the stuck queue picked up by a replacement, the killed job re-run once', async () => {
    const [queue, killed] = await Promise.all([
      play('seed-evicted-before-pickup.yaml', true),
      play('seed-karpenter-mid-job.yaml', true),
    ]);

    const stuck = queue.jobs.find((j) => j.name === 'build');
    expect(stuck).toMatchObject({ status: 'completed', conclusion: 'success', attempts: 1 });
    expect(queue.actions.filter((a) => a.by === 'runner-medic').map((a) => a.verb)).toEqual([
      'delete',
    ]);

    const rerun = killed.jobs.find((j) => j.name === 'build');
    expect(rerun).toMatchObject({ conclusion: 'success', attempts: 2 });
    const medic = killed.actions.filter((a) => a.by === 'runner-medic');
    expect(medic.filter((a) => a.api === 'github').map((a) => [a.verb, a.status])).toEqual([
      ['rerun-failed-jobs', 201],
    ]);
    // The evicted runner's EphemeralRunner, which ARC 0.13 would re-create a pod for (#4588).
    expect(medic.filter((a) => a.api === 'kubernetes').map((a) => a.verb)).toEqual(['delete']);
  }, 180_000);

  it('re-runs two jobs killed in the same run with one call', async () => {
    const outcome = await play('spot-interruption-two-jobs-same-run.yaml', true);

    const reruns = outcome.actions.filter(
      (a) => a.by === 'runner-medic' && a.verb.startsWith('rerun'),
    );
    expect(reruns).toHaveLength(1);
    expect(outcome.jobs.map((j) => [j.name, j.conclusion, j.attempts])).toEqual([
      ['unit', 'success', 2],
      ['integration', 'success', 2],
    ]);
  }, 180_000);
});

describe('one seed, one run', () => {
  it('plays the same scenario twice to the same outcome, call for call', async () => {
    const [a, b] = [
      await play('spot-interruption-two-jobs-same-run.yaml', true),
      await play('spot-interruption-two-jobs-same-run.yaml', true),
    ];

    expect(b.jobs).toEqual(a.jobs);
    expect(b.actions).toEqual(a.actions);
    expect(a.actions.length).toBeGreaterThan(100);
  }, 180_000);
});
