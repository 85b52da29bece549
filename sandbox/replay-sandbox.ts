/**
 * `runner-medic replay --sandbox`: plays a shipped scenario with runner-medic's real handlers
 * around the twins (as `npm start` does, not paced), by default in dry run, and hands back the
 * audit trail it published, for replay to report on.
 */
import { fileURLToPath } from 'node:url';
import { createKubeClusterTwin } from './scenario/kube-cluster-twin.js';
import type { ScenarioOutcome } from './scenario/outcome.js';
import { runScenario, START, type RunOptions } from './scenario/run-scenario.js';
import { loadScenario } from './scenario/scenario-schema.js';
import type { AuditRecord } from '../functions/cli/replay.js';

/** The second seed report: Karpenter consolidates a node under a running job. */
export const SANDBOX_SCENARIO = fileURLToPath(
  new URL('../test/scenarios/seed-karpenter-mid-job.yaml', import.meta.url),
);

export interface PlayedScenario {
  records: AuditRecord[];
  outcome: ScenarioOutcome;
  /** The scenario's first and last simulated moment (epoch ms). */
  since: number;
  until: number;
}

export async function playForReplay(
  file: string = SANDBOX_SCENARIO,
  options: { dryRun: boolean; onStarted?: RunOptions['onStarted'] } = { dryRun: true },
): Promise<PlayedScenario> {
  const scenario = await loadScenario(file);
  if (options.dryRun)
    scenario.remediation.policy = { ...scenario.remediation.policy, dryRun: true };
  const records: AuditRecord[] = [];
  const outcome = await runScenario(scenario, {
    remediation: true,
    createCluster: createKubeClusterTwin,
    ...(options.onStarted ? { onStarted: options.onStarted } : {}),
    describeRemediation: (detail) => {
      records.push({
        at: Date.parse(String(detail['at'])),
        detailType: 'Remediation',
        detail,
      });
      return '';
    },
  });
  return { records, outcome, since: START, until: START + scenario.durationSeconds * 1000 };
}
