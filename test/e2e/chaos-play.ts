import { join } from 'node:path';
import { createKubeClusterTwin } from '../../sandbox/scenario/kube-cluster-twin.js';
import { runScenario } from '../../sandbox/scenario/run-scenario.js';
import { loadScenario } from '../../sandbox/scenario/scenario-schema.js';
import { SCENARIO_DIR } from './scenario-play.js';

export const REMEDIABLE = [
  'seed-karpenter-mid-job.yaml',
  'seed-evicted-before-pickup.yaml',
  'spot-interruption-two-jobs-same-run.yaml',
];
export const SAFETY_ONLY = ['non-runner-pod-evicted.yaml', 'genuine-failure.yaml', ...REMEDIABLE];

/** Plays a scenario with its seed replaced and chaos rates added. */
export async function playWithChaos(file: string, seed: number, rates: Record<string, number>) {
  const scenario = await loadScenario(join(SCENARIO_DIR, file));
  scenario.seed = seed;
  scenario.rates = { ...scenario.rates, ...rates };
  return runScenario(scenario, { remediation: true, createCluster: createKubeClusterTwin });
}

/** Each property keeps its own file, so that jest runs the two in parallel workers. */
export const CHAOS_TIMEOUT_MS = 600_000;
