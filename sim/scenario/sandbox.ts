import type { SimClock } from '../clock.js';
import { formatOutcome } from './format-outcome.js';
import { createKubeClusterTwin } from './kube-cluster-twin.js';
import type { ScenarioOutcome } from './outcome.js';
import { runScenario } from './run-scenario.js';
import { loadScenario } from './scenario-schema.js';

export interface SandboxOptions {
  file: string;
  /** Simulated seconds per real second. */
  speed: number;
  write: (text: string) => void;
}

const STEP_MS = 1000;

/**
 * `npm start`'s sandbox: a scenario played with runner-medic's real handlers around the
 * simulators, its clock paced against the wall clock so the timeline can be watched.
 */
export async function playSandbox(options: SandboxOptions): Promise<ScenarioOutcome> {
  const scenario = await loadScenario(options.file);
  options.write(
    `sandbox: playing ${scenario.name} at ${options.speed}x (${scenario.durationSeconds} simulated seconds)\n`,
  );
  const outcome = await runScenario(scenario, {
    remediation: true,
    createCluster: createKubeClusterTwin,
    onTimeline: (line) => options.write(`${line}\n`),
    drive: (clock, end) => paced(clock, end, options.speed),
  });
  options.write(`${formatOutcome(outcome)}\n`);
  return outcome;
}

async function paced(clock: SimClock, end: number, speed: number): Promise<void> {
  while (clock.now() < end) {
    await clock.advanceTo(Math.min(end, clock.now() + STEP_MS));
    await new Promise((resolve) => setTimeout(resolve, STEP_MS / speed));
  }
}
