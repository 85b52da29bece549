import { MEDIC_TIMEOUT_MS, SPOTLIGHT, expectMetWithMedic, play } from './scenario-play.js';
import type { PlayedOutcome } from './scenario-play.js';

const outcomes = new Map<string, Promise<PlayedOutcome>>();
/** Each spotlight scenario is played once; every test below reads that one outcome. */
function outcomeOf(file: string): Promise<PlayedOutcome> {
  let outcome = outcomes.get(file);
  if (!outcome) {
    outcome = play(file, true);
    outcomes.set(file, outcome);
  }
  return outcome;
}

describe('the seeds and the two-jobs spot interruption with runner-medic', () => {
  it.each(SPOTLIGHT)(
    '%s meets its expectations with no invariant violated',
    async (file) => expectMetWithMedic(await outcomeOf(file)),
    MEDIC_TIMEOUT_MS,
  );

  it(
    'explains the re-run of the killed job on its commit with one check run',
    async () => {
      const killed = await outcomeOf('seed-karpenter-mid-job.yaml');
      expect(killed.checkRuns.map((c) => [c.name, c.conclusion])).toEqual([
        ['runner-medic', 'neutral'],
      ]);
      expect(killed.checkRuns[0]?.title).toMatch(/^Re-ran build: /);
    },
    MEDIC_TIMEOUT_MS,
  );

  it(
    'recovers both seeds: the stuck queue picked up by a replacement, the killed job re-run once',
    async () => {
      const queue = await outcomeOf('seed-evicted-before-pickup.yaml');
      const killed = await outcomeOf('seed-karpenter-mid-job.yaml');

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
    },
    MEDIC_TIMEOUT_MS,
  );

  it(
    're-runs two jobs killed in the same run with one call',
    async () => {
      const outcome = await outcomeOf('spot-interruption-two-jobs-same-run.yaml');

      const reruns = outcome.actions.filter(
        (a) => a.by === 'runner-medic' && a.verb.startsWith('rerun'),
      );
      expect(reruns).toHaveLength(1);
      expect(outcome.jobs.map((j) => [j.name, j.conclusion, j.attempts])).toEqual([
        ['unit', 'success', 2],
        ['integration', 'success', 2],
      ]);
    },
    MEDIC_TIMEOUT_MS,
  );
});

describe('one seed, one run', () => {
  it(
    'plays the same scenario twice to the same outcome, call for call',
    async () => {
      const a = await outcomeOf('spot-interruption-two-jobs-same-run.yaml');
      const b = await play('spot-interruption-two-jobs-same-run.yaml', true);

      expect(b.jobs).toEqual(a.jobs);
      expect(b.actions).toEqual(a.actions);
      expect(a.actions.length).toBeGreaterThan(100);
    },
    MEDIC_TIMEOUT_MS,
  );
});
