/**
 * Check runs across the shipped scenarios: each scenario played with runner-medic (the medic
 * shards and the seeds suite) asserts one `runner-medic` check run per re-run or cancel and no
 * other (`expectMetWithMedic`). Here: a scenario played in dry run decides its actions and
 * leaves no check run at all.
 */
import { join } from 'node:path';
import type { GitHubSim } from '../../sim/github/github-sim.js';
import { checkRunsOf } from '../../sim/github/rest/check-run-routes.js';
import { createKubeClusterTwin } from '../../sim/scenario/kube-cluster-twin.js';
import { runScenario } from '../../sim/scenario/run-scenario.js';
import { loadScenario } from '../../sim/scenario/scenario-schema.js';
import { MEDIC_TIMEOUT_MS, SCENARIO_DIR } from '../e2e/scenario-play.js';

it(
  'seed-karpenter-mid-job.yaml in dry run: actions decided, no check run',
  async () => {
    const scenario = await loadScenario(join(SCENARIO_DIR, 'seed-karpenter-mid-job.yaml'));
    scenario.remediation.policy = { ...scenario.remediation.policy, dryRun: true };
    let github: GitHubSim | undefined;
    const outcome = await runScenario(scenario, {
      remediation: true,
      createCluster: createKubeClusterTwin,
      onStarted: (twins) => void (github = twins.github),
    });
    expect(outcome.auditEvents.some((a) => a.outcome === 'dry-run' && a.dryRun)).toBe(true);
    expect(github && checkRunsOf(github.app)).toEqual([]);
  },
  MEDIC_TIMEOUT_MS,
);
