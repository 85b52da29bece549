/**
 * Shared by the scenario suites. Each scenario is played once per mode: the suites are split
 * into files so that jest runs them in parallel workers, and assertions about one scenario read
 * the outcome it was played to rather than playing it again.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RULE_LIST } from '../../functions/domain/decide/rules/index.js';
import { createKubeClusterTwin } from '../../sandbox/scenario/kube-cluster-twin.js';
import type { GitHubSim } from '../../sim/github/github-sim.js';
import type { DeliveryRecord } from '../../sim/github/webhooks/webhook-dispatcher.js';
import { checkRunsOf, type StoredCheckRun } from '../../sim/github/rest/check-run-routes.js';
import type { ScenarioOutcome } from '../../sandbox/scenario/outcome.js';
import { runScenario } from '../../sandbox/scenario/run-scenario.js';
import { loadScenario } from '../../sandbox/scenario/scenario-schema.js';
import {
  SERVE_PLAY_TIMEOUT_MS,
  expectServeEndsAsLambda,
  serveCaseOf,
} from '../serve/serve-comparison.js';

export const SCENARIO_DIR = 'test/scenarios';

/** Played, and asserted on in detail, by scenarios-seeds.test.ts; the shards leave them out. */
export const SPOTLIGHT = [
  'seed-evicted-before-pickup.yaml',
  'seed-karpenter-mid-job.yaml',
  'spot-interruption-two-jobs-same-run.yaml',
  'sweep-alone-frees-poisoned-slot.yaml',
];

function scenarioFiles(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

/**
 * CPU of a play with runner-medic, in typical plays, where far from one: the 50-runner mass loss
 * costs about five (27 s against 5.5 s in jest, 48d7440).
 */
const MEDIC_PLAY_WEIGHT: Record<string, number> = { 'mass-loss-consolidation-50.yaml': 5 };
/** A scenario also played through serve (serve-comparison.ts) costs a second play. */
const weightOf = (file: string) => (MEDIC_PLAY_WEIGHT[file] ?? 1) + (serveCaseOf(file) ? 1 : 0);

/**
 * The scenarios of shard `index` (1-based) of `count`, the spotlight ones left out. Heaviest
 * first, each goes to the lightest shard so far, so that no shard (one jest worker) carries the
 * mass loss and a full share of the others besides.
 */
export function shard(index: number, count: number): string[] {
  const shards = Array.from({ length: count }, () => ({ load: 0, files: [] as string[] }));
  const files = scenarioFiles().filter((f) => !SPOTLIGHT.includes(f));
  files.sort((a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b));
  for (const file of files) {
    const lightest = shards.reduce((best, s) => (s.load < best.load ? s : best));
    lightest.files.push(file);
    lightest.load += weightOf(file);
  }
  return shards[index - 1]?.files.sort() ?? [];
}

/** The scenarios of shard `index` (1-based) of `count` of the baseline, every one played. */
export function baselineShard(index: number, count: number): string[] {
  return scenarioFiles().filter((_, i) => i % count === index - 1);
}

/**
 * A scenario's outcome, the check runs runner-medic left on GitHub while it played, and what
 * reached runner-medic (or was meant to): every webhook delivery attempt GitHub's twin made or
 * dropped, and every entry the clusters' side (the event exporter, EC2) put on its bus.
 */
export interface PlayedOutcome extends ScenarioOutcome {
  checkRuns: readonly StoredCheckRun[];
  deliveries: readonly Pick<DeliveryRecord, 'event' | 'action' | 'kind' | 'dropped'>[];
  clusterBusEntries: readonly { at: number; source: string; detailType: string }[];
}

export async function play(file: string, remediation: boolean): Promise<PlayedOutcome> {
  const scenario = await loadScenario(join(SCENARIO_DIR, file));
  let github: GitHubSim | undefined;
  const clusterBusEntries: { at: number; source: string; detailType: string }[] = [];
  const outcome = await runScenario(scenario, {
    remediation,
    createCluster: async (input) => {
      const twin = await createKubeClusterTwin(input);
      twin.onBusEntry((entry) =>
        clusterBusEntries.push({
          at: (input.clock.now() - input.start) / 1000,
          source: entry.source,
          detailType: entry['detail-type'],
        }),
      );
      return twin;
    },
    onStarted: (twins) => void (github = twins.github),
  });
  return {
    ...outcome,
    checkRuns: github ? checkRunsOf(github.app) : [],
    deliveries: (github?.deliveries() ?? []).map(({ event, action, kind, dropped }) => ({
      event,
      action,
      kind,
      dropped,
    })),
    clusterBusEntries,
  };
}

/** Actions on a run that a developer sees, each explained by a check run. */
const EXPLAINED = new Set(['rerun-job', 'rerun-failed-jobs', 'cancel-run', 'force-cancel-run']);

/**
 * The general verdict on a scenario played with runner-medic: every action it audited names a
 * rule of the rule list, and each re-run or cancel it made is explained by exactly one
 * `runner-medic` check run (external id = its key), nothing else.
 */
export function expectMetWithMedic(outcome: PlayedOutcome): void {
  expect(outcome.failedExpectations).toEqual([]);
  expect(outcome.violations).toEqual([]);
  expect(outcome.errors).toEqual([]);
  expect(outcome.passed).toBe(true);
  const explained = outcome.auditEvents.filter(
    (a) => EXPLAINED.has(a.kind) && a.outcome === 'succeeded' && !a.dryRun,
  );
  expect(outcome.checkRuns.map((c) => c.externalId).sort()).toEqual(
    explained.map((a) => a.key).sort(),
  );
  const listed = new Set<string>(RULE_LIST.map((r) => r.id));
  const unlisted = outcome.auditEvents.filter((a) => a.rule !== null && !listed.has(a.rule));
  expect(unlisted).toEqual([]);
  for (const checkRun of outcome.checkRuns) {
    expect(checkRun).toMatchObject({ name: 'runner-medic', conclusion: 'neutral' });
    expect(checkRun.summary).toContain('### Evidence');
  }
}

const BASELINE_TIMEOUT_MS = 120_000;
export const MEDIC_TIMEOUT_MS = 180_000;
/**
 * Plays whose runner-medic side is known to take long: the 50-runner mass loss decides 50 losses,
 * each its own exporter event and invocation (about 50 s CPU on one core since the pooled
 * Kubernetes connections, 5 min before; more under coverage and beside other workers).
 */
const HEAVY_MEDIC_PLAYS = new Set(['mass-loss-consolidation-50.yaml']);
const HEAVY_MEDIC_TIMEOUT_MS = 900_000;

function medicTimeout(file: string): number {
  return HEAVY_MEDIC_PLAYS.has(basename(file)) ? HEAVY_MEDIC_TIMEOUT_MS : MEDIC_TIMEOUT_MS;
}

/** Defines, in the calling test file, the general test of each scenario played with runner-medic. */
export function describeWithMedic(files: string[]): void {
  describe('scenarios with runner-medic: its real handlers driven by the simulators', () => {
    const played = new Map<string, Promise<PlayedOutcome>>();
    const outcomeOf = (file: string) => {
      let outcome = played.get(file);
      if (!outcome) played.set(file, (outcome = play(file, true)));
      return outcome;
    };
    for (const file of files) {
      it(
        `${file} meets its expectations with no invariant violated`,
        async () => expectMetWithMedic(await outcomeOf(file)),
        medicTimeout(file),
      );
      const serve = serveCaseOf(file);
      if (serve)
        it(
          `${file} through runner-medic serve meets its expectations and ends as through Lambda, but for the differences written out`,
          async () => expectServeEndsAsLambda(serve, await outcomeOf(file)),
          SERVE_PLAY_TIMEOUT_MS,
        );
    }
  });
}

/** Defines, in the calling test file, the baseline test of each scenario played by ARC alone. */
export function describeArcAlone(files: string[]): void {
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
      BASELINE_TIMEOUT_MS,
    );
  });
}
