import { DEFAULT_POLICY, policyFromObject } from '../../functions/domain/policy/policy.js';
import type { Policy } from '../../functions/domain/policy/policy.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import type { ClusterTwin } from './cluster-twin.js';
import { MedicHarness, type MedicHarnessOptions } from './medic-harness.js';
import type { AppliedFault, ScenarioOutcome } from './outcome.js';
import { buildOutcome } from './outcome.js';
import type { Scenario } from './scenario-schema.js';
import { followedAttempts, ScenarioError } from './scenario-schema.js';
import { onEachAttempt } from './attempt-faults.js';
import { unconfiguredClusterEntry } from './unconfigured-cluster-event.js';

export interface RunOptions {
  remediation: boolean;
  /** Builds a cluster twin; the scenario runner owns its lifetime. */
  createCluster: (input: CreateClusterInput) => Promise<ClusterTwin>;
  /** Called with each line of the readable timeline. */
  onTimeline?: (line: string) => void;
  /** Describes one of runner-medic's audit events for the timeline (the sandbox's story). */
  describeRemediation?: (detail: Record<string, unknown>) => string;
  /** Called once the twins are up (before the first run starts), e.g. to print their addresses. */
  onStarted?: (twins: { github: GitHubSim; clusters: ClusterTwin[] }) => void;
  /** Moves the clock to the end; by default at once. The sandbox paces it against real time. */
  drive?: (clock: SimClock, end: number) => Promise<void>;
  verbose?: boolean;
  /**
   * Builds runner-medic around the twins. @default the Lambda functions (MedicHarness);
   * `runner-medic serve --sandbox` gives its in-cluster runtime (sandbox/serve-sandbox.ts).
   */
  createMedic?: (options: MedicHarnessOptions) => ScenarioMedic;
}

/** What the scenario runner needs of runner-medic: the Lambda harness, or serve's. */
export type ScenarioMedic = Pick<
  MedicHarness,
  'start' | 'stop' | 'putClusterEvent' | 'remediations' | 'errors'
>;

export interface CreateClusterInput {
  spec: Scenario['clusters'][number];
  clock: SimClock;
  seed: number | string;
  github: GitHubSim;
  eventDrop: number;
  kubeServerErrors: number;
  /** Simulated time of the scenario's second 0 (faults' `at` and `until` count from it). */
  start: number;
  /** Runner version enforcement: runners below `below` exit 0 from `runtimeAt` (sim ms) on. */
  runnerDeprecation: { below: string; runtimeAt: number } | undefined;
}

/** Simulated time of a scenario's second 0. */
export const START = Date.parse('2026-03-02T09:00:00.000Z');

/** Plays one scenario on the simulated clock, with or without runner-medic, and judges it. */
export async function runScenario(
  scenario: Scenario,
  options: RunOptions,
): Promise<ScenarioOutcome> {
  const clock = new SimClock(START);
  const say = (text: string) =>
    options.onTimeline?.(`${((clock.now() - START) / 1000).toFixed(1).padStart(8)}s  ${text}`);
  const policy = scenarioPolicy(scenario);

  const at = (secondsFromStart: number) => START + secondsFromStart * 1000;
  const knobs = scenario.github;
  const github = new GitHubSim({
    clock,
    seed: scenario.seed,
    timing: {
      lockTtlMs: knobs.lockTtlSeconds * 1000,
      gracefulStopConcludeMs: knobs.gracefulStopConcludeSeconds * 1000,
      forceCancelConcludeMs: knobs.forceCancelConcludeSeconds * 1000,
    },
    behaviour: {
      alreadyRunningAfterCompletionMs: knobs.alreadyRunningAfterCompletionSeconds * 1000,
      cancelFailures: knobs.cancelFailures.map((f) => ({
        verb: f.verb,
        status: f.status,
        ...(f.fromSeconds !== undefined ? { from: at(f.fromSeconds) } : {}),
        ...(f.untilSeconds !== undefined ? { until: at(f.untilSeconds) } : {}),
        ...(f.times !== undefined ? { times: f.times } : {}),
      })),
    },
    ...(knobs.runnerDeprecation
      ? {
          runnerDeprecation: {
            below: knobs.runnerDeprecation.below,
            runtimeDeprecatesAt: at(knobs.runnerDeprecation.runtimeAtSeconds),
            registrationDeprecatesAt:
              knobs.runnerDeprecation.registrationAtSeconds === null
                ? null
                : at(knobs.runnerDeprecation.registrationAtSeconds),
          },
        }
      : {}),
    knobs: {
      drop: scenario.rates.webhookDrop,
      duplicate: scenario.rates.webhookDuplicate,
      reorder: scenario.rates.webhookReorder,
      delayMs: scenario.rates.webhookDelaySeconds * 1000,
    },
  });
  if (scenario.rates.githubServerErrors > 0) {
    github.addFault({ kind: 'server-error', probability: scenario.rates.githubServerErrors });
  }
  for (const owner of new Set(scenario.repos.map((r) => r.name.split('/')[0] ?? ''))) {
    github.createOrg(owner);
    github.createInstallation(owner);
  }
  for (const repo of scenario.repos) {
    github.createRepo(repo.name);
    for (const workflow of repo.workflows) {
      github.defineWorkflow(repo.name, {
        name: workflow.name,
        jobs: workflow.jobs.map((job) => ({
          name: job.name,
          runsOn: job.runsOn,
          needs: job.needs,
          failFast: job.failFast,
          durationMs: job.durationSeconds * 1000,
          ...(job.matrix ? { matrix: job.matrix } : {}),
          ...(job.fails
            ? {
                fails: {
                  ...(job.fails.afterSeconds !== undefined
                    ? { afterMs: job.fails.afterSeconds * 1000 }
                    : {}),
                  ...(job.fails.attempts ? { attempts: job.fails.attempts } : {}),
                  ...(job.fails.matrix ? { matrix: job.fails.matrix } : {}),
                },
              }
            : {}),
        })),
      });
    }
  }
  await github.start();
  github.on((event) => {
    if (event.type === 'workflow_job') {
      const where = event.job.runnerName ? ` on ${event.job.runnerName}` : '';
      const how = event.job.conclusion ? ` (${event.job.conclusion})` : '';
      say(`github  job ${event.job.name} #${event.job.runAttempt} ${event.action}${where}${how}`);
    } else if (event.action === 'completed') {
      say(`github  run ${event.run.id} completed (${event.run.conclusion ?? ''})`);
    }
  });

  const clusters: ClusterTwin[] = [];
  let medic: ScenarioMedic | undefined;
  const faults: AppliedFault[] = [];
  const runIds: number[] = [];
  try {
    for (const spec of scenario.clusters) {
      clusters.push(
        await options.createCluster({
          spec,
          clock,
          seed: scenario.seed,
          github,
          eventDrop: scenario.rates.eventDrop,
          kubeServerErrors: scenario.rates.kubeServerErrors,
          start: START,
          runnerDeprecation: knobs.runnerDeprecation && {
            below: knobs.runnerDeprecation.below,
            runtimeAt: at(knobs.runnerDeprecation.runtimeAtSeconds),
          },
        }),
      );
    }
    if (options.remediation) {
      const medicOptions: MedicHarnessOptions = {
        clock,
        github,
        kubeconfigs: Object.fromEntries(
          clusters.map((c) => [c.name, c.kubeconfig('runner-medic')]),
        ),
        // CLUSTERS.<name>.namespaces, as docs/deploy.md sets it beside the namespaced grants.
        namespaces: Object.fromEntries(
          scenario.clusters.map((c) => [c.name, [...new Set(c.scaleSets.map((s) => s.namespace))]]),
        ),
        policy,
        sweepSeconds: scenario.remediation.sweepSeconds,
        verbose: options.verbose ?? false,
        eventDuplicate: scenario.rates.eventDuplicate,
        eventReorder: scenario.rates.eventReorder,
        seed: scenario.seed,
        ...(options.describeRemediation
          ? {
              onRemediation: (record) =>
                say(`medic   ${options.describeRemediation?.(record.detail) ?? ''}`),
            }
          : {}),
      };
      medic = options.createMedic?.(medicOptions) ?? new MedicHarness(medicOptions);
      await medic.start();
      for (const cluster of clusters) cluster.onBusEntry((entry) => medic?.putClusterEvent(entry));
    }

    options.onStarted?.({ github, clusters });
    for (const run of scenario.runs) {
      clock.at(START + run.at * 1000, `run ${run.workflow}`, () => {
        const { runId } = github.triggerRun(run.repo, run.workflow);
        runIds.push(runId);
        say(`user    triggered ${run.repo} ${run.workflow}: run ${runId}`);
      });
    }
    for (const fault of scenario.faults) {
      const fire = async () => {
        if (fault.kind === 'unconfigured-cluster-event') {
          // Delivered as the exporter's own events are; ARC alone has nobody to deliver it to.
          medic?.putClusterEvent(unconfiguredClusterEntry(fault, clock.now()));
          faults.push({
            kind: fault.kind,
            cluster: fault.clusterName,
            at: clock.now(),
            namespace: fault.namespace,
            scaleSet: null,
            pods: [],
          });
          say(`fault   ${fault.reason} event from unconfigured cluster ${fault.clusterName}`);
          return;
        }
        const cluster = clusters.find((c) => c.name === fault.cluster);
        if (!cluster) throw new ScenarioError(scenario.name, [`no cluster ${fault.cluster}`]);
        const applied = await cluster.applyFault(fault);
        faults.push(applied);
        say(
          `fault   ${fault.kind} in ${fault.cluster}: ${applied.pods.join(', ') || 'no pod hit'}`,
        );
      };
      const follow = followedAttempts(fault);
      if (!follow) clock.at(START + fault.at * 1000, `fault ${fault.kind}`, fire);
      else
        onEachAttempt(
          github,
          clock,
          { ...follow, after: fault.at, label: `fault ${fault.kind}` },
          fire,
          (why) => say(`fault   ${fault.kind} not applied: ${why}`),
        );
    }

    const end = START + scenario.durationSeconds * 1000;
    await (options.drive ? options.drive(clock, end) : clock.advanceTo(end));

    const byId = new Map(github.runs().map((r) => [r.id, r]));
    return buildOutcome({
      scenario,
      remediation: options.remediation,
      start: START,
      end,
      runs: runIds
        .map((id) => byId.get(id))
        .filter((r): r is NonNullable<typeof r> => r !== undefined),
      runners: github.runners(),
      githubAudit: github.audit(),
      kubeAudit: clusters.map((c) => ({ cluster: c.name, entries: c.audit() })),
      kubeRequests: clusters.map((c) => ({ cluster: c.name, entries: c.requests?.() ?? [] })),
      faults,
      remediations: medic?.remediations ?? [],
      errors: medic?.errors ?? [],
      rerunBudget: policy.rules.rerunKilledJob.budget,
    });
  } finally {
    await medic?.stop();
    for (const cluster of clusters) await cluster.stop();
    await github.stop();
  }
}

function scenarioPolicy(scenario: Scenario): Policy {
  if (Object.keys(scenario.remediation.policy).length === 0) return DEFAULT_POLICY;
  const result = policyFromObject(scenario.remediation.policy);
  if (!result.ok)
    throw new ScenarioError(
      scenario.name,
      result.errors.map((e) => `remediation.policy: ${e}`),
    );
  return result.value;
}
