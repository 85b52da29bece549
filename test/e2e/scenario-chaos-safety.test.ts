import fc from 'fast-check';
import { CHAOS_TIMEOUT_MS, SAFETY_ONLY, playWithChaos } from './chaos-play.js';

describe('runner-medic under chaos (fast-check over the scenario runner)', () => {
  it(
    'stays safe: no duplicate effect, no budget exceeded, no non-runner touched, nothing done where nothing was lost',
    async () => {
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
            const outcome = await playWithChaos(file, seed, rates);

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
    },
    CHAOS_TIMEOUT_MS,
  );
});
