/**
 * Every shipped scenario, played with runner-medic: each re-run or cancel it makes is explained
 * by exactly one `runner-medic` check run on its run's commit (external id = the action's key),
 * with the evidence, and nothing else gets one. Played in dry run: no check run at all.
 */
import { join } from 'node:path';
import type { GitHubSim } from '../../sim/github/github-sim.js';
import { checkRunsOf } from '../../sim/github/rest/check-run-routes.js';
import { createKubeClusterTwin } from '../../sim/scenario/kube-cluster-twin.js';
import { runScenario } from '../../sim/scenario/run-scenario.js';
import { loadScenario } from '../../sim/scenario/scenario-schema.js';
import { MEDIC_TIMEOUT_MS, SCENARIO_DIR, scenarioFiles } from '../e2e/scenario-play.js';

const EXPLAINED = ['rerun-job', 'rerun-failed-jobs', 'cancel-run', 'force-cancel-run'];

async function playCapturing(file: string, dryRun: boolean) {
  const scenario = await loadScenario(join(SCENARIO_DIR, file));
  if (dryRun) scenario.remediation.policy = { ...scenario.remediation.policy, dryRun: true };
  const audits: Record<string, unknown>[] = [];
  let github: GitHubSim | undefined;
  await runScenario(scenario, {
    remediation: true,
    createCluster: createKubeClusterTwin,
    describeRemediation: (detail) => {
      audits.push(detail);
      return '';
    },
    onStarted: (twins) => {
      github = twins.github;
    },
  });
  if (!github) throw new Error('the scenario never started its twins');
  return { audits, checkRuns: checkRunsOf(github.app) };
}

/**
 * Defines the test. It needs the scenario harness to pass a check-run publisher in the engine's
 * deps (requests R1 and R2 of the [operate] helper: EngineDeps.checkRuns, medic-harness.ts);
 * then `check-runs-scenarios.test.ts` is one line: `checkRunsInScenarios();`. With both applied
 * to a copy of the tree, all 18 cases passed (17 scenarios and the dry run).
 */
export function checkRunsInScenarios(): void {
  describe('check runs in the shipped scenarios', () => {
    let explainedInAll = 0;
    afterAll(() => expect(explainedInAll).toBeGreaterThan(0));

    it.each(scenarioFiles())(
      '%s: one check run per re-run or cancel, with its evidence, and no other',
      async (file) => {
        const { audits, checkRuns } = await playCapturing(file, false);
        const explained = audits.filter(
          (a) =>
            EXPLAINED.includes(String(a['action'])) &&
            a['outcome'] === 'succeeded' &&
            a['dryRun'] === false,
        );
        expect(checkRuns.map((c) => c.externalId).sort()).toEqual(
          explained.map((a) => String(a['key'])).sort(),
        );
        explainedInAll += explained.length;
        for (const checkRun of checkRuns) {
          expect(checkRun).toMatchObject({ name: 'runner-medic', conclusion: 'neutral' });
          expect(checkRun.summary).toContain('### Evidence');
          expect(checkRun.summary).toMatch(/\*\*Rule\*\*: `rule-\d/);
        }
      },
      MEDIC_TIMEOUT_MS,
    );

    it(
      'seed-karpenter-mid-job.yaml in dry run: actions decided, no check run',
      async () => {
        const { audits, checkRuns } = await playCapturing('seed-karpenter-mid-job.yaml', true);
        expect(audits.some((a) => a['outcome'] === 'dry-run')).toBe(true);
        expect(checkRuns).toEqual([]);
      },
      MEDIC_TIMEOUT_MS,
    );
  });
}
