import type { ActionKind } from '../model/action.js';
import { isoTime } from '../model/iso-time.js';
import type { LossCause, Signal } from '../model/loss.js';

/** What a developer is told about one action on their job: the facts behind it. */
export interface ExplanationInput {
  kind: ActionKind;
  rule: string;
  /** The engine's own reason (the audit event's `reason`). */
  reason: string;
  cause: LossCause | null;
  signal: Signal | null;
  /** Names of the jobs concerned; empty when the store does not know them. */
  jobNames: string[];
  runId: number;
  /** The attempt the action was decided on (a re-run starts the next one). */
  runAttempt: number | null;
  runUrl: string;
  runner: { cluster: string; namespace: string; name: string } | null;
  node: string | null;
  /** When the runner was lost (epoch ms), as first recorded. */
  lostAt: number | null;
  /** When runner-medic acted (epoch ms). */
  actedAt: number;
  /** The job's re-run budget after this action; null for actions that do not charge it. */
  budget: { limit: number; used: number } | null;
}

export interface Explanation {
  title: string;
  /** Markdown. */
  summary: string;
}

const PRESSURE: Record<string, string> = {
  memory: 'MemoryPressure',
  disk: 'DiskPressure',
  pid: 'PIDPressure',
  other: 'node pressure',
};

/** The loss in a developer's words: "runner pod was evicted (MemoryPressure)". */
function describeLoss(cause: LossCause): string {
  switch (cause.kind) {
    case 'node-pressure-eviction':
      return `runner pod was evicted (${PRESSURE[cause.resource] ?? cause.resource})`;
    case 'admission-reject':
      return `runner pod was rejected by its node (${cause.detail})`;
    case 'api-eviction':
      return `runner pod was evicted by ${cause.by}${cause.karpenterReason ? ` (${cause.karpenterReason})` : ''}`;
    case 'preemption':
      return 'runner pod was preempted by a higher-priority pod';
    case 'taint-manager':
      return 'runner pod was evicted by the taint manager';
    case 'pod-gc':
      return 'runner pod was garbage-collected with its node';
    case 'kubelet-shutdown':
      return 'runner pod was stopped by a node shutdown';
    case 'oom-killed':
      return `runner was OOMKilled (container ${cause.container})`;
    case 'runner-killed':
      return `runner was killed (container ${cause.container}, exit ${cause.exitCode})`;
    case 'pod-not-found':
      return 'runner pod disappeared';
    case 'node-not-ready':
      return "runner's node stopped responding (NotReady)";
    case 'runner-failed':
      return `runner failed to start (${cause.reason ?? 'no reason given'})`;
    case 'runner-stuck':
      return 'runner stayed up after its job had ended';
  }
}

function verb(kind: ActionKind): string {
  switch (kind) {
    case 'rerun-job':
    case 'rerun-failed-jobs':
      return 'Re-ran';
    case 'cancel-run':
      return 'Cancelled';
    case 'force-cancel-run':
      return 'Force-cancelled';
    default:
      return 'Freed the runner of';
  }
}

/** The check run's title and summary for one action, from its evidence. Pure. */
export function composeExplanation(input: ExplanationInput): Explanation {
  const what =
    input.jobNames.length > 0
      ? input.jobNames.join(', ')
      : input.kind === 'cancel-run' || input.kind === 'force-cancel-run'
        ? `run ${input.runId}`
        : `run ${input.runId}'s jobs`;
  const why = input.cause ? describeLoss(input.cause) : input.reason;
  const title = `${verb(input.kind)} ${what}: ${why}`;

  const evidence: string[] = [];
  if (input.runner)
    evidence.push(
      `- **Pod**: \`${input.runner.namespace}/${input.runner.name}\` in cluster \`${input.runner.cluster}\``,
    );
  evidence.push(`- **Node**: ${input.node ? `\`${input.node}\`` : 'not known'}`);
  evidence.push(
    input.signal
      ? `- **Seen in**: ${input.signal.source}: ${input.signal.detail}`
      : '- **Seen in**: no Kubernetes signal recorded',
  );
  if (input.cause) evidence.push(`- **Cause**: ${input.cause.kind}`);
  evidence.push(
    `- **Time**: ${input.lostAt !== null ? isoTime(input.lostAt) : 'not known'} (acted at ${isoTime(input.actedAt)})`,
  );

  const rerun = input.kind === 'rerun-job' || input.kind === 'rerun-failed-jobs';
  const attempt =
    input.runAttempt === null
      ? 'not known'
      : rerun
        ? `${input.runAttempt} (this re-run is attempt ${input.runAttempt + 1})`
        : String(input.runAttempt);
  const budget = input.budget
    ? `${Math.max(0, input.budget.limit - input.budget.used)} of ${input.budget.limit} re-runs left for this job`
    : 'not charged (only re-runs use the budget)';

  const summary = [
    `runner-medic ${verb(input.kind).toLowerCase()} ${what} because its ${why}.`,
    '',
    '### Evidence',
    ...evidence,
    '',
    '### Decision',
    `- **Rule**: \`${input.rule}\`: ${input.reason}`,
    `- **Attempt**: ${attempt}`,
    `- **Re-run budget**: ${budget}`,
    `- **Run**: [run ${input.runId}](${input.runUrl})`,
    '',
    'runner-medic rescues jobs whose self-hosted runner was lost with the machine under them; ' +
      'this check run is informational and does not affect the result.',
  ].join('\n');
  return { title, summary };
}
