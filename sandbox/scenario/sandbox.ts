import type { SimClock } from '../../sim/clock.js';
import { formatOutcome } from './format-outcome.js';
import { createKubeClusterTwin } from './kube-cluster-twin.js';
import type { JobOutcome, ScenarioOutcome } from './outcome.js';
import { runScenario } from './run-scenario.js';
import type { Scenario } from './scenario-schema.js';
import { loadScenario } from './scenario-schema.js';

export interface SandboxOptions {
  file: string;
  /** Simulated seconds per real second. */
  speed: number;
  write: (text: string) => void;
  /** The wall clock the pacing follows; tests give their own. */
  wallClock?: WallClock;
}

export interface WallClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface SandboxResult {
  withMedic: ScenarioOutcome;
  arcAlone: ScenarioOutcome;
  /** runner-medic met every expectation of the scenario (what `npm start -- --once` exits on). */
  recovered: boolean;
}

const STEP_MS = 1000;

const realClock: WallClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * `npm start`'s sandbox: a scenario played with runner-medic's real handlers around the
 * simulators, paced against the wall clock so the story can be watched as it happens, then the
 * same scenario with ARC alone, and both outcomes side by side.
 */
export async function playSandbox(options: SandboxOptions): Promise<SandboxResult> {
  const scenario = await loadScenario(options.file);
  const wall = options.wallClock ?? realClock;
  const realSeconds = Math.round(scenario.durationSeconds / options.speed);
  options.write(
    `sandbox: playing ${scenario.name} at ${options.speed}x: ${scenario.durationSeconds} simulated seconds in about ${realSeconds} s\n`,
  );
  const withMedic = await runScenario(scenario, {
    remediation: true,
    createCluster: createKubeClusterTwin,
    onTimeline: (line) => options.write(`${line}\n`),
    describeRemediation,
    drive: (clock, end) => paced(clock, end, options.speed, wall),
  });
  options.write(`${formatOutcome(withMedic)}\n`);

  options.write(`\nsandbox: the same scenario with ARC alone (not paced), for comparison\n`);
  const arcAlone = await runScenario(scenario, {
    remediation: false,
    createCluster: createKubeClusterTwin,
  });
  options.write(`${compareOutcomes(scenario, withMedic, arcAlone)}\n`);
  return { withMedic, arcAlone, recovered: withMedic.passed };
}

/**
 * Advances the simulated clock one step at a time, each step due at a fixed point of the wall
 * clock, so the time the simulation itself takes is absorbed rather than added to every sleep.
 */
export async function paced(
  clock: SimClock,
  end: number,
  speed: number,
  wall: WallClock = realClock,
): Promise<void> {
  const simStart = clock.now();
  const wallStart = wall.now();
  while (clock.now() < end) {
    await clock.advanceTo(Math.min(end, clock.now() + STEP_MS));
    const due = wallStart + (clock.now() - simStart) / speed;
    const wait = due - wall.now();
    if (wait > 0) await wall.sleep(wait);
  }
}

/** One line of the story for one of runner-medic's audit events. */
export function describeRemediation(detail: Record<string, unknown>): string {
  const text = (key: string) => (typeof detail[key] === 'string' ? detail[key] : null);
  const what = text('action') ?? 'action';
  const target = (detail.target ?? {}) as Record<string, unknown>;
  const on =
    typeof target.runId === 'number'
      ? `${text('repository') ?? ''} run ${target.runId}`
      : (text('runner') ?? text('repository') ?? '');
  const outcome = detail.dryRun === true ? 'dry run' : (text('outcome') ?? '?');
  const evidence = text('causeText') ?? text('reason') ?? '';
  return `${what} ${on} → ${outcome}  [${text('rule') ?? '?'}]${evidence ? `  because ${evidence}` : ''}`;
}

/**
 * The closing summary: each job as ARC alone leaves it and as runner-medic leaves it, and how
 * much sooner the job was moving again (ran on a healthy runner, or had its re-run accepted).
 */
function compareOutcomes(
  scenario: Scenario,
  withMedic: ScenarioOutcome,
  arcAlone: ScenarioOutcome,
): string {
  const key = (j: JobOutcome) => `${j.run}#${j.name}`;
  const alone = new Map(arcAlone.jobs.map((j) => [key(j), j]));
  const rows = withMedic.jobs.map((j) => {
    const base = alone.get(key(j));
    return `  ${j.name.padEnd(20)} ${describeJob(base).padEnd(44)} ${describeJob(j).padEnd(44)} ${timeSaved(scenario, base, j)}`;
  });
  return [
    '',
    `summary: ${scenario.name} (${scenario.durationSeconds} simulated seconds)`,
    `  ${'job'.padEnd(20)} ${'ARC alone'.padEnd(44)} ${'with runner-medic'.padEnd(44)} time saved`,
    ...rows,
    '',
    withMedic.passed
      ? 'runner-medic recovered every job the scenario expects.'
      : 'runner-medic did NOT meet the scenario: see the failed expectations above.',
  ].join('\n');
}

function describeJob(job: JobOutcome | undefined): string {
  if (!job) return 'not run';
  const state = job.status === 'completed' ? (job.conclusion ?? 'completed') : job.status;
  const lost = job.lostAt === null ? '' : `, lost at ${job.lostAt.toFixed(1)}s`;
  const moving =
    job.lostAt === null
      ? ''
      : job.recoveredAt === null
        ? ', never moving again'
        : `, moving again at ${job.recoveredAt.toFixed(1)}s`;
  return `${state} #${job.attempts}${lost}${moving}`;
}

function timeSaved(scenario: Scenario, alone: JobOutcome | undefined, medic: JobOutcome): string {
  if (medic.lostAt === null || medic.recoveredAt === null) return '-';
  const aloneAt = alone?.recoveredAt ?? null;
  if (aloneAt === null)
    return `over ${(scenario.durationSeconds - medic.recoveredAt).toFixed(0)}s (ARC alone never recovers)`;
  return `${(aloneAt - medic.recoveredAt).toFixed(1)}s`;
}
