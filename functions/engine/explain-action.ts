import * as z from 'zod';
import { RERUN_KINDS, type ActionKind } from '../domain/model/action.js';
import { composeExplanation } from '../domain/decide/explanation.js';
import type { LossCause, Signal } from '../domain/model/loss.js';
import type { Policy } from '../domain/policy/policy.js';
import { budgetSpent } from '../domain/decide/rule.js';
import { rerunKilledJob } from '../domain/decide/rules/rerun-killed-job.js';
import { resolvePolicy } from '../domain/policy/resolve-policy.js';
import type { CheckRunPublisher } from '../ports/check-runs.js';
import type { BusEvent } from '../ports/event-publisher.js';
import type { FactsStore } from '../ports/facts-store.js';
import { REMEDIATION_DETAIL_TYPE } from './remediation-event.js';

/** Actions on a workflow run: the ones a developer sees, and the ones explained on the commit. */
const EXPLAINED_KINDS: ReadonlySet<ActionKind> = new Set<ActionKind>([
  'rerun-job',
  'rerun-failed-jobs',
  'cancel-run',
  'force-cancel-run',
]);

/** The part of a stored `Remediation` audit event an explanation is made of. */
const auditSchema = z.object({
  key: z.string().min(1),
  rule: z.string(),
  target: z.object({
    kind: z.string(),
    repo: z.string().optional(),
    installationId: z.number().nullable().optional(),
    runId: z.number().optional(),
    runAttempt: z.number().optional(),
    jobIds: z.array(z.number()).optional(),
    jobId: z.number().optional(),
  }),
  cluster: z.string().nullable(),
  namespace: z.string().nullable(),
  scaleSet: z.string().nullable(),
  runner: z.string().nullable(),
  cause: z.object({ kind: z.string() }).passthrough().nullable(),
  signal: z.object({ source: z.string(), detail: z.string() }).nullable(),
  reason: z.string(),
  outcome: z.string(),
  dryRun: z.boolean(),
  at: z.string(),
});

/**
 * The audit event with `lostAt`: when the runner behind the action was lost (ISO 8601), as the
 * engine's facts date it, or null. `runner-medic replay` measures loss → action with it.
 */
export function withLossTime(event: BusEvent, lostAt: number | null): BusEvent {
  return {
    ...event,
    detail: { ...event.detail, lostAt: lostAt === null ? null : new Date(lostAt).toISOString() },
  };
}

export interface ExplainDeps {
  store: FactsStore;
  policy: () => Promise<Policy>;
  log: {
    info(message: string, fields?: object): void;
    warn(message: string, fields?: object): void;
  };
  /** Absent: explanations are off (`CHECK_RUNS=off`), the audit trail alone tells. */
  checkRuns?: CheckRunPublisher;
}

export type ExplainResult =
  { explained: true; checkRunId: number; created: boolean } | { explained: false; why: string };

/**
 * Leaves a `runner-medic` check run on the commit of the run an action touched: called with
 * the audit event as stored in the outbox, before it is marked published, by the engine right
 * after acting and by the sweep for events left in the outbox. The check run's external id is
 * the action's key, so a retry after a crash finds it instead of making a second one. Never
 * throws: a check run that cannot be made is logged and leaves the action and its audit alone.
 */
export async function explainAction(
  event: { detailType: string; detail: Record<string, unknown> },
  deps: ExplainDeps,
): Promise<ExplainResult> {
  if (event.detailType !== REMEDIATION_DETAIL_TYPE) return skip('not a remediation');
  const parsed = auditSchema.safeParse(event.detail);
  if (!parsed.success) return skip('audit event not understood');
  const audit = parsed.data;
  const kind = audit.target.kind as ActionKind;
  if (audit.dryRun || audit.outcome !== 'succeeded') return skip(`outcome ${audit.outcome}`);
  if (!EXPLAINED_KINDS.has(kind)) return skip(`${kind} touches no run`);
  const { repo, runId } = audit.target;
  if (!repo || runId === undefined) return skip('no run named');
  if (!deps.checkRuns) return skip('check runs are off');
  if (!(await deps.policy()).checkRuns) return skip('check runs are off in the policy');
  const ref = { repo, installationId: audit.target.installationId ?? null };
  try {
    const head = await deps.checkRuns.runHead(ref, runId);
    if (!head) return skip(`run ${runId} is gone`);
    const explanation = composeExplanation({
      kind,
      rule: audit.rule,
      reason: audit.reason,
      cause: audit.cause as LossCause | null,
      signal: audit.signal as Signal | null,
      runId,
      runAttempt: audit.target.runAttempt ?? null,
      runUrl: head.htmlUrl,
      actedAt: Date.parse(audit.at),
      ...(await evidence(audit, repo, runId, deps)),
    });
    const published = await deps.checkRuns.publish({
      ref,
      headSha: head.headSha,
      externalId: audit.key,
      title: explanation.title,
      summary: explanation.summary,
      detailsUrl: head.htmlUrl,
      completedAt: Date.parse(audit.at),
    });
    deps.log.info('action explained on its commit', {
      key: audit.key,
      checkRun: published.id,
      created: published.created,
    });
    return { explained: true, checkRunId: published.id, created: published.created };
  } catch (error) {
    deps.log.warn('could not explain an action with a check run', {
      key: audit.key,
      error: (error as Error).message,
    });
    return skip(`check run failed: ${(error as Error).message}`);
  }
}

const skip = (why: string): ExplainResult => ({ explained: false, why });

/** Job names, the runner's node and loss time, and the budget, from the store's run and runner. */
async function evidence(
  audit: z.infer<typeof auditSchema>,
  repo: string,
  runId: number,
  deps: ExplainDeps,
) {
  const now = Date.parse(audit.at);
  const run = await deps.store.readRun(repo, runId, now);
  const jobIds = audit.target.jobIds ?? (audit.target.jobId ? [audit.target.jobId] : []);
  const jobNames = [
    ...new Set(run.facts.jobs.filter((j) => jobIds.includes(j.job.jobId)).map((j) => j.job.name)),
  ];
  const runner =
    audit.cluster && audit.namespace && audit.runner
      ? { cluster: audit.cluster, namespace: audit.namespace, name: audit.runner }
      : null;
  let node: string | null = null;
  let lostAt: number | null = null;
  if (runner) {
    const read = await deps.store.readRunnerName(runner.name, now);
    const losses = read.facts.losses
      .filter((l) => l.cluster === runner.cluster && l.namespace === runner.namespace)
      .sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity));
    node = losses.find((l) => l.nodeName)?.nodeName ?? null;
    lostAt = losses.find((l) => l.at !== null)?.at ?? null;
  }
  let budget: { limit: number; used: number } | null = null;
  const own = run.facts.actions.find((a) => a.key === audit.key);
  if (RERUN_KINDS.has(audit.target.kind as ActionKind) && audit.cluster) {
    const settings = resolvePolicy(await deps.policy(), {
      cluster: audit.cluster,
      namespace: audit.namespace,
      scaleSet: audit.scaleSet,
      repo,
    }).rules.rerunKilledJob;
    const limit = rerunKilledJob.budget(settings) ?? 0;
    // The most spent of the job's budget slots this action charged.
    const used = Math.max(
      0,
      ...(own?.budgetKeys ?? []).map((k) => budgetSpent(run.facts.actions, k)),
    );
    budget = { limit, used };
  }
  return { jobNames, runner, node, lostAt, budget };
}
