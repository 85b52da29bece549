/**
 * Leader election in the middle of an action, on the scenario's simulated clock (so every wait is
 * a number of simulated seconds, never a wall-clock hope): the Karpenter seed played by two serve
 * replicas on one Kubernetes twin and one SQLite file. GitHub's webhooks go to the follower,
 * which records them for whoever leads. The leader is stopped as a SIGKILL stops it (no drain,
 * the Lease not released) after its first action's effect and result, before its audit event
 * (the engine's afterAct): the event stays in the store's outbox. The follower takes the Lease
 * once it expires, publishes what the outbox holds, and the scenario recovers with every effect
 * made once (the outcome fails on a duplicate effect). serve-leader-kill-process.test.ts kills a
 * real process there, and between the effect and its result.
 */
import type { Action } from '../../functions/domain/model/action.js';
import type { ServeRuntime } from '../../functions/serve/serve-runtime.js';
import { playServeSandbox } from '../../sandbox/serve-sandbox.js';

test('the leader killed between an action and its result: the follower takes over, nothing is done twice', async () => {
  const killed: { replica: string; action: string }[] = [];
  const leaders: string[][] = [];
  const story: string[] = [];
  const result = await playServeSandbox({
    file: 'test/scenarios/seed-karpenter-mid-job.yaml',
    speed: null,
    write: (text) => story.push(text),
    replicas: 2,
    webhookReplica: 1,
    afterAct: async (replica: ServeRuntime, action: Action) => {
      if (killed.length > 0) return;
      killed.push({ replica: replica.identity, action: action.target.kind });
      await replica.abandon();
      // As after a SIGKILL, the run that was acting never goes on: its event is never published.
      await new Promise(() => undefined);
    },
    onStep: (replicas) => {
      const now = replicas.filter((r) => r.status().leading).map((r) => r.identity);
      if (leaders.at(-1)?.join() !== now.join()) leaders.push(now);
    },
  });

  expect(killed.map((k) => [k.replica, k.action])).toEqual([
    ['runner-medic-0', 'delete-ephemeral-runner'],
  ]);
  // Never two leaders at once; replica 0 led, then nobody while its Lease ran out, then replica 1.
  expect(leaders.every((l) => l.length <= 1)).toBe(true);
  expect(leaders.filter((l) => l.length === 1)).toEqual([['runner-medic-0'], ['runner-medic-1']]);

  const { outcome } = result;
  expect({
    passed: outcome.passed,
    failed: outcome.failedExpectations,
    violations: outcome.violations,
    errors: outcome.errors,
  }).toEqual({ passed: true, failed: [], violations: [], errors: [] });
  // Each effect once: the EphemeralRunner deleted by the killed leader, the re-run by the new one.
  const medic = result.outcome.actions.filter((a) => a.by === 'runner-medic');
  expect(medic.map((a) => a.verb).sort()).toEqual(['delete', 'rerun-failed-jobs']);
}, 600_000);
