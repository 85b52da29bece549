import fc from 'fast-check';
import { findRunnerLoss } from '../../../functions/domain/classify/annotations.js';
import {
  MUTATING_KINDS,
  RERUN_KINDS,
  type Action,
} from '../../../functions/domain/model/action.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import { RULE_LIST } from '../../../functions/domain/decide/rules/index.js';
import type { ActionRecord, Facts, JobRecord } from '../../../functions/domain/model/facts.js';
import { rerunBudgetKey } from '../../../functions/domain/model/idempotency-key.js';
import { DEFAULT_POLICY, mergeDeep, type Policy } from '../../../functions/domain/policy/policy.js';
import { isArcOwned, isRunnerPod } from '../../../functions/domain/correlate/runner-guard.js';
import { RUN_ID, er, facts, job, node, pod, run } from './builders.js';
import { LOST_ANNOTATION, T0, iso, runnerLabels } from './fixtures.js';

const runnerArb = fc.record({
  set: fc.constantFrom('set-a', 'set-b'),
  pod: fc.option(
    fc.record({
      lost: fc.constantFrom('none', 'evicted', 'rejected', 'oom'),
      arcLabels: fc.boolean(),
      version: fc.constantFrom('0.8.2', '0.13.1'),
    }),
  ),
  er: fc.option(
    fc.record({
      phase: fc.constantFrom('Running', 'Failed'),
      deleting: fc.boolean(),
      hasJob: fc.boolean(),
    }),
  ),
  nodeReady: fc.boolean(),
  lostAgo: fc.integer({ min: 0, max: 3_600_000 }),
});

// Weighted towards the interesting case: a lost job on a known runner in a completed run.
const jobArb = fc.record({
  runner: fc.constantFrom(-1, 0, 0, 1, 1, 2, 3),
  run: fc.integer({ min: 0, max: 1 }),
  attempt: fc.constantFrom(1, 1, 1, 2),
  name: fc.constantFrom('build', 'test', 'lint'),
  conclusion: fc.constantFrom('failure', 'failure', 'cancelled', 'success', 'timed_out'),
  annotations: fc.constantFrom('none', 'lost', 'lost', 'lost', 'lost', 'genuine', 'empty'),
});

const actionArb = fc.record({
  run: fc.integer({ min: 0, max: 1 }),
  attempt: fc.integer({ min: 1, max: 2 }),
  name: fc.constantFrom('build', 'test', 'lint'),
  outcome: fc.constantFrom('claimed', 'succeeded', 'retry-later', 'gave-up', 'failed', 'dry-run'),
});

const worldArb = fc.record({
  runners: fc.array(runnerArb, { minLength: 1, maxLength: 5 }),
  jobs: fc.array(jobArb, { maxLength: 6 }),
  runs: fc.array(
    fc.record({
      run: fc.integer({ min: 0, max: 1 }),
      attempt: fc.integer({ min: 1, max: 2 }),
      done: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  actions: fc.array(actionArb, { maxLength: 2 }),
  policy: fc.record({
    dryRun: fc.boolean(),
    budget: fc.integer({ min: 0, max: 3 }),
    maxLossesPerScaleSet: fc.integer({ min: 2, max: 8 }),
    hungJob: fc.boolean(),
  }),
  now: fc.integer({ min: 0, max: 7_200_000 }),
});

type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never;

const name = (i: number, set: string) => `${set}-abcde-runner-r${i}`;

function build(w: World): { facts: Facts; policy: Policy; now: number } {
  const now = T0 + w.now;
  const f = facts();
  w.runners.forEach((r, i) => {
    const n = name(i, r.set);
    const lostAt = iso(now - r.lostAgo);
    const labels = { ...runnerLabels(r.set, r.pod?.version ?? '0.13.1') };
    if (r.pod) {
      const lost = r.pod.lost;
      f.pods.push(
        pod({
          name: n,
          version: r.pod.version,
          labels: r.pod.arcLabels ? labels : { app: 'not-a-runner' },
          nodeName: `node-${i}`,
          conditions:
            lost === 'none' ? [] : [{ type: 'Ready', status: 'False', lastTransitionTime: lostAt }],
          ...(lost === 'evicted'
            ? {
                phase: 'Failed',
                reason: 'Evicted',
                message: 'The node was low on resource: memory. ',
              }
            : {}),
          ...(lost === 'rejected'
            ? {
                phase: 'Failed',
                reason: 'Evicted',
                message: 'The node had condition: [DiskPressure]. ',
              }
            : {}),
          ...(lost === 'oom'
            ? {
                phase: 'Failed',
                containerStatuses: [
                  { name: 'runner', state: { terminated: { reason: 'OOMKilled', exitCode: 137 } } },
                ],
              }
            : {}),
        }),
      );
    }
    if (r.er) {
      const e = er({
        name: n,
        phase: r.er.phase,
        ...(r.er.deleting ? { deletionTimestamp: lostAt } : {}),
        ...(r.er.hasJob
          ? {
              job: {
                jobRepositoryName: 'acme/app',
                workflowRunId: RUN_ID,
                jobDisplayName: 'build',
              },
            }
          : {}),
      });
      f.ephemeralRunners.push({ ...e, metadata: { ...e.metadata, labels } });
    }
    f.nodes.push({ ...node({ name: `node-${i}`, ready: r.nodeReady ? 'True' : 'Unknown' }) });
  });
  const annotations = {
    none: null,
    lost: [{ annotation_level: 'failure', message: LOST_ANNOTATION }],
    genuine: [{ annotation_level: 'failure', message: 'Process completed with exit code 1.' }],
    empty: [],
  } as const;
  w.jobs.forEach((j, k) => {
    const runner = w.runners[j.runner];
    f.jobs.push(
      job(
        {
          jobId: 1000 + k,
          runId: RUN_ID + j.run,
          runAttempt: j.attempt,
          name: j.name,
          labels: [runner?.set ?? 'set-a'],
          conclusion: j.conclusion,
          runnerName: runner ? name(j.runner, runner.set) : null,
        },
        annotations[j.annotations] ? [...(annotations[j.annotations] ?? [])] : null,
      ),
    );
  });
  for (const r of w.runs)
    f.runs.push(
      run({
        runId: RUN_ID + r.run,
        runAttempt: r.attempt,
        status: r.done ? 'completed' : 'in_progress',
      }),
    );
  f.actions = w.actions.map((a, k): ActionRecord => ({
    key: `rerun:acme/app:${RUN_ID + a.run}:${a.attempt}:try:${k}`,
    kind: 'rerun-failed-jobs',
    rule: 'rule-3-rerun-killed-job',
    claimedAt: now - 120_000,
    finishedAt: now - 100_000,
    outcome: a.outcome,
    dryRun: a.outcome === 'dry-run',
    budgetKeys: [rerunBudgetKey('acme/app', RUN_ID + a.run, a.name)],
    jobIds: [],
  }));
  const policy = mergeDeep(DEFAULT_POLICY, {
    dryRun: w.policy.dryRun,
    rules: {
      rerunKilledJob: { budget: w.policy.budget },
      circuitBreaker: { maxLossesPerScaleSet: w.policy.maxLossesPerScaleSet },
      hungJob: { enabled: w.policy.hungJob },
    },
  });
  return { facts: f, policy, now };
}

const claim = (f: Facts, actions: Action[], now: number): Facts => ({
  ...f,
  actions: [
    ...f.actions,
    ...actions.map((a): ActionRecord => ({
      key: a.key,
      kind: a.target.kind,
      rule: a.rule,
      claimedAt: now,
      outcome: a.dryRun ? 'dry-run' : 'claimed',
      finishedAt: null,
      dryRun: a.dryRun,
      budgetKeys: a.budgetKeys,
      jobIds: 'jobIds' in a.target ? a.target.jobIds : [],
    })),
  ],
});

const isGenuine = (j: JobRecord) =>
  j.job.conclusion === 'timed_out' ||
  (j.job.conclusion === 'failure' &&
    j.annotations !== null &&
    findRunnerLoss(j.annotations) === null);

describe('decide, for any fact set', () => {
  it('is deterministic, keys are unique and never already claimed or done', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { facts: f, policy, now } = build(w);
        const d = decide(f, policy, now);
        expect(decide(f, policy, now)).toEqual(d);
        const keys = d.actions.map((a) => a.key);
        expect(new Set(keys).size).toBe(keys.length);
        const done = new Set(
          f.actions
            .filter((a) => a.outcome !== 'failed' && a.outcome !== 'retry-later')
            .map((a) => a.key),
        );
        expect(keys.filter((k) => done.has(k))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('keys name the effect, not the time: the same target keeps its key at any later now', () => {
    fc.assert(
      fc.property(worldArb, fc.integer({ min: 1, max: 3_600_000 }), (w, later) => {
        const { facts: f, policy, now } = build(w);
        const keyOf = (actions: Action[]) =>
          new Map(
            actions
              .filter((a) => a.target.kind !== 'schedule-retry')
              .map((a) => [JSON.stringify(a.target), a.key]),
          );
        const before = keyOf(decide(f, policy, now).actions);
        for (const [target, key] of keyOf(decide(f, policy, now + later).actions))
          if (before.has(target)) expect(key).toBe(before.get(target));
      }),
      { numRuns: 300 },
    );
  });

  it('never exceeds a re-run budget, never re-runs a genuine failure', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { facts: f, policy, now } = build(w);
        const d = decide(f, policy, now);
        const charged = new Map<string, number>();
        for (const a of d.actions.filter((x) => RERUN_KINDS.has(x.target.kind)))
          for (const k of a.budgetKeys) charged.set(k, (charged.get(k) ?? 0) + 1);
        for (const [k, n] of charged) {
          const used = f.actions.filter(
            (a) =>
              !a.dryRun && a.budgetKeys.includes(k) && ['claimed', 'succeeded'].includes(a.outcome),
          ).length;
          expect(used + n).toBeLessThanOrEqual(policy.rules.rerunKilledJob.budget);
        }
        for (const a of d.actions) {
          const t = a.target;
          if (t.kind === 'rerun-failed-jobs')
            expect(
              f.jobs.filter(
                (j) => j.job.runId === t.runId && j.job.runAttempt === t.runAttempt && isGenuine(j),
              ),
            ).toEqual([]);
          if (t.kind === 'rerun-job') {
            const j = f.jobs.find((x) => x.job.jobId === t.jobId);
            expect(j && j.annotations && findRunnerLoss(j.annotations)).toBeTruthy();
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never touches a non-runner object, and dry-run marks every action', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { facts: f, policy, now } = build(w);
        for (const a of decide(f, policy, now).actions) {
          expect(a.dryRun).toBe(policy.dryRun);
          const t = a.target;
          if (t.kind === 'delete-ephemeral-runner' || t.kind === 'remove-finalizer') {
            const e = f.ephemeralRunners.find((x) => x.metadata.uid === t.uid);
            expect(e && isArcOwned(e.metadata)).toBe(true);
            const p = f.pods.find((x) => x.metadata.name === t.name);
            expect(!p || isRunnerPod(p.metadata)).toBe(true);
          }
          if (t.kind === 'delete-pod') {
            const p = f.pods.find((x) => x.metadata.uid === t.uid);
            expect(p && isRunnerPod(p.metadata)).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('takes no destructive action where the circuit breaker has tripped', () => {
    fc.assert(
      fc.property(worldArb, (w) => {
        const { facts: f, policy, now } = build(w);
        const { actions } = decide(f, policy, now);
        const trips = actions.flatMap((a) => (a.target.kind === 'trip-breaker' ? [a.target] : []));
        const inTrip = actions.filter(
          (a) =>
            MUTATING_KINDS.has(a.target.kind) &&
            trips.some(
              (t) =>
                t.cluster === a.scope.cluster &&
                (t.scaleSet === null || t.scaleSet === a.scope.scaleSet),
            ),
        );
        expect(inTrip).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('every action and hold is of a listed rule, and no action of a rule switched off', () => {
    const names = RULE_LIST.map((r) => r.name);
    fc.assert(
      fc.property(worldArb, fc.subarray(names), (w, off) => {
        const { facts: f, policy, now } = build(w);
        const switchedOff = mergeDeep(policy, {
          rules: Object.fromEntries(off.map((name) => [name, { enabled: false }])),
        });
        const nameOf = new Map<string, string>(RULE_LIST.map((r) => [r.id, r.name]));
        const d = decide(f, switchedOff, now);
        for (const a of d.actions) {
          expect(nameOf.has(a.rule)).toBe(true);
          expect(off).not.toContain(nameOf.get(a.rule));
        }
        for (const h of d.held) expect(nameOf.has(h.rule)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('converges: once its actions are claimed, deciding again repeats no effect', () => {
    fc.assert(
      fc.property(worldArb, fc.integer({ min: 0, max: 60_000 }), (w, later) => {
        const { facts: f, policy, now } = build(w);
        const first = decide(f, policy, now);
        const second = decide(claim(f, first.actions, now), policy, now + later);
        const done = new Set(first.actions.map((a) => JSON.stringify(a.target)));
        const repeated = second.actions.filter(
          (a) => done.has(JSON.stringify(a.target)) && a.target.kind !== 'trip-breaker',
        );
        expect(repeated).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});
