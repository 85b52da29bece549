import fc from 'fast-check';
import { join } from 'node:path';
import { createKubeClusterTwin } from '../../sim/scenario/kube-cluster-twin.js';
import { runScenario } from '../../sim/scenario/run-scenario.js';
import { loadScenario } from '../../sim/scenario/scenario-schema.js';

const REMEDIABLE = [
  'seed-karpenter-mid-job.yaml',
  'seed-evicted-before-pickup.yaml',
  'spot-interruption-two-jobs-same-run.yaml',
];
const SAFETY_ONLY = ['non-runner-pod-evicted.yaml', 'genuine-failure.yaml', ...REMEDIABLE];

async function play(file: string, seed: number, rates: Record<string, number>) {
  const scenario = await loadScenario(join('test/scenarios', file));
  scenario.seed = seed;
  scenario.rates = { ...scenario.rates, ...rates };
  return runScenario(scenario, { remediation: true, createCluster: createKubeClusterTwin });
}

describe('runner-medic under chaos (fast-check over the scenario runner)', () => {
  it('converges despite dropped, duplicate, reordered and delayed webhooks and cluster events, and 5xx from both APIs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...REMEDIABLE),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.record({
          webhookDrop: fc.double({ min: 0, max: 0.5, noNaN: true }),
          webhookDuplicate: fc.double({ min: 0, max: 0.5, noNaN: true }),
          webhookReorder: fc.double({ min: 0, max: 0.5, noNaN: true }),
          webhookDelaySeconds: fc.integer({ min: 0, max: 5 }),
          eventDrop: fc.double({ min: 0, max: 0.5, noNaN: true }),
          eventDuplicate: fc.double({ min: 0, max: 0.5, noNaN: true }),
          eventReorder: fc.double({ min: 0, max: 0.5, noNaN: true }),
          githubServerErrors: fc.double({ min: 0, max: 0.1, noNaN: true }),
          kubeServerErrors: fc.double({ min: 0, max: 0.1, noNaN: true }),
        }),
        async (file, seed, rates) => {
          const outcome = await play(file, seed, rates);

          expect(outcome.violations).toEqual([]);
          // Converged: every job of the run ended in success (slower than the ideal is allowed).
          expect(outcome.jobs.map((j) => [j.name, j.conclusion])).toEqual(
            outcome.jobs.map((j) => [j.name, 'success']),
          );
        },
      ),
      { numRuns: 4, seed: 20261202, endOnFailure: true },
    );
  }, 600_000);

  it('stays safe: no duplicate effect, no budget exceeded, no non-runner touched, nothing done where nothing was lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SAFETY_ONLY),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.record({
          webhookDrop: fc.double({ min: 0, max: 0.5, noNaN: true }),
          webhookDuplicate: fc.double({ min: 0, max: 0.5, noNaN: true }),
          eventDrop: fc.double({ min: 0, max: 0.5, noNaN: true }),
          eventDuplicate: fc.double({ min: 0, max: 0.5, noNaN: true }),
          githubServerErrors: fc.double({ min: 0, max: 0.2, noNaN: true }),
          kubeServerErrors: fc.double({ min: 0, max: 0.2, noNaN: true }),
        }),
        async (file, seed, rates) => {
          const outcome = await play(file, seed, rates);

          expect(outcome.violations).toEqual([]);
          if (file === 'genuine-failure.yaml' || file === 'non-runner-pod-evicted.yaml') {
            // Asking GitHub to redeliver a dropped webhook is the only call allowed here.
            const remediations = outcome.actions.filter(
              (a) => a.by === 'runner-medic' && a.verb !== 'redeliver-webhook',
            );
            expect(remediations).toEqual([]);
          }
        },
      ),
      { numRuns: 4, seed: 1202, endOnFailure: true },
    );
  }, 600_000);
});
