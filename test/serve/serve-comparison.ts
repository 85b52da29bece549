/**
 * The shipped scenarios played through `runner-medic serve` (its informers, Lease, webhook port,
 * timers and SQLite on the twins: sandbox/serve-sandbox.ts) end as they end through the
 * Lambda harness (sandbox/scenario/medic-harness.ts): each scenario's own expectations are met, and
 * the outcomes' key facts are the same: each job's conclusion and attempts, and runner-medic's
 * mutating calls and audit events by kind. Each scenario is played once per runtime, each play on
 * its own twins, store and clock: the scenario suites (test/e2e) compare serve's play with the
 * Lambda play they make anyway, rather than playing it through Lambda a second time.
 *
 * Where serve does something else, the difference is written out below with why. serve decides
 * in the simulated instant a change happens: its informers see a pod's own state the moment the
 * kubelet or the pod garbage collector writes it, and a webhook reaches its engine with no
 * EventBridge hop. The Lambda deployment hears only of what kubernetes-event-exporter exports (an
 * Event, a second or so later) and of webhooks through its bus (0.5 s in the harness), and reads
 * the rest in a sweep. So serve sometimes acts before ARC's own controller, whose reaction the
 * Lambda deployment always sees first.
 */
import { playServeSandbox } from '../../sandbox/serve-sandbox.js';
import { formatOutcome } from '../../sandbox/scenario/format-outcome.js';
import type { ScenarioOutcome } from '../../sandbox/scenario/outcome.js';

const SCENARIO_DIR = 'test/scenarios';
/** A play is 5 to 10 s of CPU on a quiet machine (an hour of simulated time); beside other workers, more. */
export const SERVE_PLAY_TIMEOUT_MS = 600_000;

export interface ServeCase {
  file: string;
  /**
   * runner-medic's calls or audit events (keys as `keyFacts` writes them) that serve makes and
   * the Lambda deployment does not, with why. Empty: the very same.
   */
  serveOnly: Record<string, number>;
  /** The scenario's expectations serve fails, and why. @default none */
  serveFails?: string[];
}

export const SERVE_CASES: ServeCase[] = [
  { file: 'seed-evicted-before-pickup.yaml', serveOnly: {} },
  // The pod is rejected at 1 s; ARC re-creates it and the job runs on it. The job's completion
  // reaches serve before ARC 0.15 deletes the finished runner, and the rejection, older than the
  // job, does not count as a loss of it (correlate/runner-losses.ts tookJobBefore).
  { file: 'arc-0.15-seed-evicted-before-pickup.yaml', serveOnly: {} },
  { file: 'seed-karpenter-mid-job.yaml', serveOnly: {} },
  { file: 'arc-0.15-seed-karpenter-mid-job.yaml', serveOnly: {} },
  {
    file: 'hard-kill-mid-job.yaml',
    // The node is deleted with no grace. The pod garbage collector deletes its runner pod and
    // writes no Event (kubernetes/pkg/controller/podgc/gc_controller.go: a DisruptionTarget
    // condition, DeletionByPodGC, then a force delete), so the Lambda deployment learns nothing
    // until a sweep finds ARC's re-created pod with a spent JIT config (rule 4 at 190 s), and
    // frees the slot only once the job is re-run (rule 1, runner-stuck, at 261 s). serve's pod
    // informer sees the pod garbage-collected at 120 s: rule 1 frees the busy runner's slot at
    // once (it deletes the EphemeralRunner and force-deletes the pod on the deleted node), and
    // rule 4 cancels on that force delete 30 s later. The same calls on GitHub; on Kubernetes,
    // the pod's force delete besides.
    serveOnly: {
      'kubernetes delete pods': 1,
      'audit delete-pod rule-1-free-poisoned-slot succeeded': 1,
    },
  },
  // The runner is SIGKILLed; serve's pod informer sees it killed in that instant, before ARC
  // 0.15's controller deletes its EphemeralRunner and pod (0.2 s later). Rule 1 leaves a killed
  // runner's slot to ARC ≥ 0.15 for the ordinary grace (free-slot.ts), so both runtimes make the
  // same calls.
  { file: 'hard-kill-mid-job-arc-0-15.yaml', serveOnly: {} },
  { file: 'graceful-drain-mid-job.yaml', serveOnly: {} },
  { file: 'genuine-failure.yaml', serveOnly: {} },
  {
    file: 'genuine-failure-beside-killed-job.yaml',
    // e2e's pod is evicted for memory, on both of its first attempts. serve's pod informer sees
    // it Failed in the instant the kubelet writes it, before ARC's controller has reconciled its
    // EphemeralRunner, and rule 1 frees the busy runner's slot at once (grace 0 for a runner that
    // took a job). The Lambda deployment hears of it from the exporter's Evicted Event a second
    // later, when ARC has deleted the EphemeralRunner itself. The scenario allows those deletes
    // ("when the EphemeralRunner outlives its pod").
    serveOnly: {
      'kubernetes delete ephemeralrunners.actions.github.com': 2,
      'audit delete-ephemeral-runner rule-1-free-poisoned-slot succeeded': 2,
    },
  },
];

/**
 * What both runtimes must agree on: each job's end and attempts, and runner-medic's mutating
 * calls (GitHub's by verb and what they act on, Kubernetes' by verb and resource) and audit
 * events (kind, rule, outcome), counted. Names and times are left out: the twins name runners
 * at random, and serve decides on watches rather than on exported events.
 */
function keyFacts(outcome: ScenarioOutcome): {
  jobs: string[];
  calls: Record<string, number>;
} {
  const calls: Record<string, number> = {};
  const count = (key: string) => (calls[key] = (calls[key] ?? 0) + 1);
  for (const a of outcome.actions.filter((x) => x.by === 'runner-medic'))
    count(
      a.api === 'kubernetes'
        ? `kubernetes ${a.verb} ${a.target.split('/')[1] ?? ''}`
        : `github ${a.verb} ${
            a.target
              .replace(/\/\d+$/, '')
              .split('/')
              .at(-1) ?? ''
          }`,
    );
  for (const e of outcome.auditEvents)
    count(`audit ${e.kind} ${e.rule ?? '-'} ${e.outcome ?? '-'}${e.dryRun ? ' dry-run' : ''}`);
  return {
    jobs: outcome.jobs.map(
      (j) => `run ${j.run} ${j.name}: ${j.conclusion ?? j.status} x${j.attempts}`,
    ),
    calls,
  };
}

/**
 * 'as expected' when the outcome failed exactly the expectations `known` lists (mostly none) and
 * broke no invariant; else the outcome's own text, so that a failure reads as `npm start` prints it.
 */
function verdict(outcome: ScenarioOutcome, known: string[] = []): string {
  const asKnown =
    outcome.violations.length === 0 &&
    outcome.errors.length === 0 &&
    outcome.failedExpectations.join('\n') === known.join('\n');
  return asKnown ? 'as expected' : formatOutcome(outcome);
}

async function playThroughServe(file: string): Promise<ScenarioOutcome> {
  const { outcome } = await playServeSandbox({
    file: `${SCENARIO_DIR}/${file}`,
    speed: null,
    write: () => undefined,
  });
  return outcome;
}

/** The serve case of a scenario, if it is played through serve too. */
export const serveCaseOf = (file: string): ServeCase | undefined =>
  SERVE_CASES.find((c) => c.file === file);

/**
 * Plays a scenario through serve, and holds it to its expectations and to `lambda`, the same
 * scenario's play through the Lambda harness, but for the differences its case writes out.
 */
export async function expectServeEndsAsLambda(
  { file, serveOnly, serveFails }: ServeCase,
  lambda: ScenarioOutcome,
): Promise<void> {
  const serve = await playThroughServe(file);

  expect(verdict(serve, serveFails)).toBe('as expected');
  expect(verdict(lambda)).toBe('as expected');
  const expected = keyFacts(lambda);
  for (const [key, n] of Object.entries(serveOnly))
    expected.calls[key] = (expected.calls[key] ?? 0) + n;
  expect(keyFacts(serve)).toEqual(expected);
}
