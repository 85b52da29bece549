/**
 * `runner-medic replay`: its figures over a played scenario match the scenario's own outcome.
 * The second seed (Karpenter consolidates a node under a running job) is played twice with the
 * real handlers around the twins: acting, then in dry run; replay reads each audit trail. The
 * dry run also shows that runner-medic leaves no check run when it acts in dry run (each
 * scenario played acting, in the medic shards and the seeds suite, asserts one per re-run or
 * cancel: `expectMetWithMedic`).
 */
import { runCli } from '../../functions/cli/main.js';
import { playForReplay, type PlayedScenario } from '../../sandbox/replay-sandbox.js';
import { parseAuditRecords, parseDuration, replayReport } from '../../functions/cli/replay.js';
import type { ReplayReport } from '../../functions/cli/replay.js';
import { DynamoFactsStore } from '../../functions/adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import type { Action } from '../../functions/domain/model/action.js';
import type { GitHubSim } from '../../sim/github/github-sim.js';
import { checkRunsOf } from '../../sim/github/rest/check-run-routes.js';
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe('replay over the second seed scenario', () => {
  let acting: PlayedScenario;
  let acted: ReplayReport;
  beforeAll(async () => {
    acting = await playForReplay(undefined, { dryRun: false });
    acted = replayReport(acting.records, acting.since, acting.until);
  }, 180_000);

  it('counts, per rule, the calls runner-medic made in the scenario', () => {
    const calls = acting.outcome.actions.filter((a) => a.by === 'runner-medic');
    expect(calls.length).toBeGreaterThan(0);
    const byRule = new Map<string, number>();
    for (const c of calls) byRule.set(c.rule ?? '?', (byRule.get(c.rule ?? '?') ?? 0) + 1);
    const mutating = acted.rules
      .map((r) => [r.rule, total(r.did)] as const)
      .filter(([, n]) => n > 0);
    expect(new Map(mutating)).toEqual(byRule);
  });

  it('times loss to re-run as the scenario does, and counts the jobs it re-ran', () => {
    const rerun = acted.rules.find((r) => r.rule === 'rule-3-rerun-killed-job');
    const recovered = acting.outcome.jobs.filter((j) => j.actionAt !== null);
    expect(rerun?.jobs).toBe(recovered.length);
    const [job] = recovered;
    const scenarioDelay = (job?.actionAt ?? 0) - (job?.lostAt ?? 0);
    // The scenario dates the loss by the runner's stop; runner-medic by the Kubernetes signal,
    // which carries whole seconds: they agree within one second.
    expect(
      Math.abs((rerun?.lossToAction?.medianSeconds ?? -99) - scenarioDelay),
    ).toBeLessThanOrEqual(1);
  });

  /** The dry-run play, played once for the tests that read it, and the GitHub twin it ran on. */
  let github: GitHubSim | undefined;
  let dryRun: Promise<PlayedScenario> | undefined;
  const dryPlay = () =>
    (dryRun ??= playForReplay(undefined, {
      dryRun: true,
      onStarted: (twins) => void (github = twins.github),
    }));

  it('in dry run, would have done exactly what it did when acting, and called nothing', async () => {
    const dry = await dryPlay();
    expect(dry.outcome.actions.filter((a) => a.by === 'runner-medic')).toEqual([]);
    const would = replayReport(dry.records, dry.since, dry.until);
    const plan = (r: ReplayReport, pick: 'did' | 'wouldHave') =>
      Object.fromEntries(r.rules.filter((x) => total(x[pick]) > 0).map((x) => [x.rule, x[pick]]));
    expect(plan(would, 'wouldHave')).toEqual(plan(acted, 'did'));
    expect(would.verdict).toMatch(/action\(s\) decided in dry run/);
  }, 180_000);

  it('in dry run, decides its actions and leaves no check run', async () => {
    const dry = await dryPlay();
    expect(dry.outcome.auditEvents.some((a) => a.outcome === 'dry-run' && a.dryRun)).toBe(true);
    expect(github && checkRunsOf(github.app)).toEqual([]);
  }, 180_000);
});

describe('replay from a file of audit events', () => {
  it('reads EventBridge events, applies the window, and prints per rule', async () => {
    const at = Date.parse('2026-03-02T09:00:00Z');
    const event = (minutes: number, detail: object) =>
      JSON.stringify({
        'detail-type': 'Remediation',
        time: new Date(at + minutes * 60_000).toISOString(),
        detail,
      });
    const lines = [
      event(0, {
        rule: 'rule-3-rerun-killed-job',
        action: 'rerun-failed-jobs',
        outcome: 'dry-run',
        target: { repo: 'acme/app', jobIds: [7] },
        runner: 'r1',
        cluster: 'c',
        lostAt: new Date(at - 30_000).toISOString(),
      }),
      event(1, {
        rule: 'rule-3-rerun-killed-job',
        action: 'schedule-retry',
        outcome: 'gave-up',
        gaveUp: 'k',
        reason: 're-run budget of 2 exhausted for budget:acme/app:1:build',
      }),
      event(-60 * 24 * 8, {
        rule: 'rule-1-free-poisoned-slot',
        action: 'delete-pod',
        outcome: 'succeeded',
      }),
    ];
    const records = parseAuditRecords(lines.join('\n'));
    const report = replayReport(records, at - 7 * 86_400_000, at + 3_600_000);
    expect(report.rules).toEqual([
      expect.objectContaining({
        rule: 'rule-3-rerun-killed-job',
        wouldHave: { 'rerun-failed-jobs': 1 },
        did: {},
        jobs: 1,
        runners: 1,
        held: [{ why: 're-run budget of 2 exhausted for budget:acme/app:1:build', count: 1 }],
        lossToAction: { count: 1, medianSeconds: 30, maxSeconds: 30 },
      }),
    ]);
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('soon')).toMatch(/not a duration/);

    const out: string[] = [];
    const io = {
      env: {},
      out: (t: string) => void out.push(t),
      err: (t: string) => void out.push(t),
    };
    expect(await runCli(['replay', '--since', 'soon'], io)).toBe(64);
    expect(await runCli(['replay'], io)).toBe(2);
    expect(out.join('')).toContain('pass --events');
  });
});

describe('replay from the store', () => {
  it('reads the audit trail the engine kept with its actions, within the window', async () => {
    const dynamo = await startEmbeddedDynamo('runner-medic-replay');
    try {
      const store = new DynamoFactsStore(
        createDocumentClient(dynamo.clientConfig),
        dynamo.tableName,
      );
      const now = Date.now();
      const day = 86_400_000;
      for (const [key, at, outcome] of [
        ['recent', now - 3_600_000, 'succeeded'],
        ['dry', now - 2 * day, 'dry-run'],
        ['old', now - 9 * day, 'succeeded'],
      ] as const) {
        const action = {
          key,
          rule: 'rule-3-rerun-killed-job',
          target: { kind: 'rerun-failed-jobs', repo: 'acme/app', runId: 1, runAttempt: 1 },
          scope: { cluster: 'c', namespace: 'arc-runners', runnerName: `r-${key}` },
        } as unknown as Action;
        await store.claimAction(action, at, 60_000);
        await store.finishAction(key, outcome, at, 'done', {
          detailType: 'Remediation',
          detail: {
            rule: 'rule-3-rerun-killed-job',
            action: 'rerun-failed-jobs',
            outcome,
            target: { repo: 'acme/app', jobIds: [key.length] },
            at: new Date(at).toISOString(),
          },
        });
      }
      const out: string[] = [];
      const io = {
        env: { TABLE_NAME: dynamo.tableName, DYNAMODB_ENDPOINT: dynamo.endpoint },
        out: (t: string) => void out.push(t),
        err: (t: string) => void out.push(t),
      };
      expect(await runCli(['replay', '--since', '7d', '--json'], io)).toBe(0);
      const report = JSON.parse(out.join('')) as ReplayReport;
      expect(report.rules).toEqual([
        expect.objectContaining({
          rule: 'rule-3-rerun-killed-job',
          did: { 'rerun-failed-jobs': 1 },
          wouldHave: { 'rerun-failed-jobs': 1 },
        }),
      ]);
    } finally {
      await dynamo.close();
    }
  });
});
