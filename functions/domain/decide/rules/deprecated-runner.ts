import { defineRule, ruleSettings } from '../rule.js';
import { runnerVersionOf, versionIn } from '../runner-version.js';
import type { RunnerView } from '../../correlate/correlate.js';
import { idempotencyKey } from '../../model/idempotency-key.js';
import { isProvenArcRunner } from '../../correlate/runner-guard.js';
import { effectiveFor, propose, runnerScope, type RuleContext } from '../context.js';

const RUNNER_CONTAINER = 'runner';

/**
 * A runner process that exited 0 without ever taking a job. actions/runner exits 0 when GitHub
 * refuses its version ("Runner version v2.328.0 is deprecated and cannot receive messages.",
 * enforced since 2026-09-25); ARC then replaces it and the pods cycle while jobs wait.
 */
function exitedWithoutJob(v: RunnerView): string | null {
  if (!v.pod || v.busy || v.er?.job.jobRequestId || v.er?.job.jobId) return null;
  const runner = v.pod.containerStatuses.find((c) => c.name === RUNNER_CONTAINER);
  const t = runner?.terminated;
  if (!t || t.exitCode !== 0) return null;
  return `pod ${v.pod.metadata.name}: runner container exited 0 (${t.reason ?? 'no reason'}${t.message ? `: ${t.message.trim()}` : ''}) without taking a job`;
}

/**
 * Runners of the scale set come and go without taking its queued job: a job queued longer than
 * the starving-queue threshold, and an idle runner whose pod ARC created after that threshold
 * had passed (a healthy fresh runner takes a queued job within seconds; this one replaced others
 * that did not). Seen at any sweep, unlike the exit itself, which ARC cleans up at once.
 */
function cyclesPastQueuedJob(ctx: RuleContext, v: RunnerView): string | null {
  const created = v.pod?.metadata.creationTimestamp ?? null;
  if (!v.pod || v.busy || created === null || !v.scaleSet) return null;
  const threshold = effectiveFor(ctx, runnerScope(v)).rules.starvingQueue.queuedSeconds * 1000;
  const scaleSet = v.scaleSet.toLowerCase();
  for (const j of ctx.facts.jobs) {
    if (j.job.status !== 'queued' || j.job.runnerName !== null) continue;
    if (!j.job.labels.some((l) => l.toLowerCase() === scaleSet)) continue;
    const queuedAt = Date.parse(j.job.createdAt ?? '');
    if (!Number.isFinite(queuedAt) || created < queuedAt + threshold) continue;
    return `job ${j.job.jobId} queued since ${new Date(queuedAt).toISOString()}, and runner pod ${v.pod.metadata.name}, created ${Math.round((created - queuedAt) / 1000)} s later, has not taken it: its predecessors left without taking it`;
  }
  return null;
}

/**
 * Rule 8: runners of a scale set exit 0 without taking a job, or cycle past a queued job.
 * Deleting them cannot help (ARC replaces them with the same image), so nothing is deleted: the
 * scale set is reported once per version, and carrying the report out asks GitHub when that
 * version stops working.
 */
export const deprecatedRunner = defineRule({
  number: 8,
  name: 'deprecatedRunner',
  id: 'rule-8-deprecated-runner',
  settings: ruleSettings({}),
  defaults: { enabled: true, dryRun: false },
  decide(ctx: RuleContext): void {
    for (const v of ctx.correlation.runners) {
      if (!v.arcOwned || !isProvenArcRunner(v) || !v.scaleSet) continue;
      const evidence = exitedWithoutJob(v) ?? cyclesPastQueuedJob(ctx, v);
      if (!evidence) continue;
      const scope = runnerScope(v);
      if (!effectiveFor(ctx, scope).rules.deprecatedRunner.enabled) continue;
      const version = versionIn(evidence) ?? (v.pod ? runnerVersionOf(v.pod) : null);
      const job = ctx.facts.jobs.find((j) =>
        j.job.labels.some((l) => l.toLowerCase() === v.scaleSet?.toLowerCase()),
      );
      propose(ctx, {
        rule: 'deprecatedRunner',
        key: idempotencyKey(
          'report-deprecated-runner',
          v.cluster,
          v.namespace,
          v.scaleSet,
          version ?? 'unknown-version',
        ),
        target: {
          kind: 'report-deprecated-runner',
          cluster: v.cluster,
          namespace: v.namespace,
          scaleSet: v.scaleSet,
          version,
          runnerName: v.name,
          evidence,
          owner: job ? { repo: job.repository.fullName } : null,
          installationId: job?.installationId ?? null,
        },
        scope,
        cause: null,
        signal: { source: 'container-status', detail: evidence },
        reason: `runners of scale set ${v.scaleSet} leave without taking a job (${evidence}), as runners of a version GitHub refuses do: report it once; deleting them would only loop`,
        budgetKeys: [],
      });
    }
  },
});
