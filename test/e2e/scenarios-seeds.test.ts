import { join } from 'node:path';
import { loadScenario } from '../../sandbox/scenario/scenario-schema.js';
import {
  MEDIC_TIMEOUT_MS,
  SCENARIO_DIR,
  SPOTLIGHT,
  expectMetWithMedic,
  play,
} from './scenario-play.js';
import type { PlayedOutcome } from './scenario-play.js';
import {
  SERVE_CASES,
  SERVE_PLAY_TIMEOUT_MS,
  expectServeEndsAsLambda,
} from '../serve/serve-comparison.js';

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

  it.each(SERVE_CASES.filter((c) => SPOTLIGHT.includes(c.file)))(
    '$file through runner-medic serve meets its expectations and ends as through Lambda, but for the differences written out',
    async (serve) => expectServeEndsAsLambda(serve, await outcomeOf(serve.file)),
    SERVE_PLAY_TIMEOUT_MS,
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

describe('the sweep alone, with every Kubernetes event and half of the webhooks lost', () => {
  it(
    'frees the poisoned slot at the first sweep after the loss, and the job runs within two sweep intervals',
    async () => {
      const file = 'sweep-alone-frees-poisoned-slot.yaml';
      const { remediation, rates } = await loadScenario(join(SCENARIO_DIR, file));
      expect(rates).toMatchObject({ eventDrop: 1, webhookDrop: 0.5 });
      const alone = await outcomeOf(file);
      // The same world with its signals delivered: the exporter's event acts before any sweep.
      const signalled = await outcomeOf('seed-evicted-before-pickup.yaml');
      expect(signalled.clusterBusEntries.map((e) => e.source)).toContain('k8s.events');
      expect(signalled.jobs[0]?.actionAt).toBeLessThan(remediation.sweepSeconds);

      // Not one exported Kubernetes event reached runner-medic; only EC2's state changes of the
      // node Karpenter launched for the replacement, after the slot was freed.
      const freed = alone.auditEvents.filter(
        (a) => a.kind === 'delete-ephemeral-runner' && a.rule === 'rule-1-free-poisoned-slot',
      );
      expect(freed.map((a) => [a.at, a.outcome])).toEqual([
        [remediation.sweepSeconds, 'succeeded'],
      ]);
      const freedAt = freed[0]?.at ?? 0;
      expect(alone.clusterBusEntries.filter((e) => e.source !== 'aws.ec2')).toEqual([]);
      expect(alone.clusterBusEntries.filter((e) => e.at <= freedAt)).toEqual([]);

      // Half of the first deliveries were dropped, the job's queued and in_progress among them;
      // the sweep asked GitHub to redeliver each one.
      const first = alone.deliveries.filter((d) => d.kind === 'first');
      const dropped = first.filter((d) => d.dropped).map((d) => `${d.event}.${d.action}`);
      expect(first).toHaveLength(6);
      expect(dropped.sort()).toEqual([
        'workflow_job.in_progress',
        'workflow_job.queued',
        'workflow_run.completed',
      ]);
      const redelivered = alone.deliveries.filter((d) => d.kind === 'redelivery');
      expect(redelivered.map((d) => `${d.event}.${d.action}`).sort()).toEqual(dropped);

      // Lost 1.5 s in, just after the first sweep (0 s): the next sweep (60 s) frees the slot, and
      // on ARC 0.9 rule 1's grace is 0, so the evidence is actionable from the loss on.
      const [job] = alone.jobs;
      expect(job).toMatchObject({ lostAt: 1.5, actionAt: remediation.sweepSeconds });
      expect(job?.status).toBe('completed');
      expect(job?.conclusion).toBe('success');
      const running = (job?.runningAgainAt ?? Infinity) - (job?.lostAt ?? 0);
      expect(running).toBeGreaterThan(remediation.sweepSeconds);
      expect(running).toBeLessThanOrEqual(2 * remediation.sweepSeconds);
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
