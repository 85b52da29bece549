import fc from 'fast-check';
import { CHAOS_TIMEOUT_MS, REMEDIABLE, playWithChaos } from './chaos-play.js';

describe('runner-medic under chaos (fast-check over the scenario runner)', () => {
  it(
    'converges despite dropped, duplicate, reordered and delayed webhooks and cluster events, and 5xx from both APIs',
    async () => {
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
            const outcome = await playWithChaos(file, seed, rates);

            expect(outcome.violations).toEqual([]);
            // Converged: every job of the run ended in success (slower than the ideal is allowed).
            expect(outcome.jobs.map((j) => [j.name, j.conclusion])).toEqual(
              outcome.jobs.map((j) => [j.name, 'success']),
            );
          },
        ),
        { numRuns: 4, seed: 20261202, endOnFailure: true },
      );
    },
    CHAOS_TIMEOUT_MS,
  );
});
