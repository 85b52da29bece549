import type { RunnerView } from '../correlate.js';
import { idempotencyKey } from '../idempotency-key.js';
import { isProvenArcRunner } from '../runner-guard.js';
import { effectiveFor, propose, runnerScope, type RuleContext } from './context.js';

const RUNNER_CONTAINER = 'runner';

/**
 * A runner process that exited 0 without ever taking a job. actions/runner exits 0 when GitHub
 * refuses its version ("Runner version v2.328.0 is deprecated and cannot receive messages.",
 * enforced since 2026-09-25); ARC then replaces it and the pods cycle while jobs wait.
 */
export function exitedWithoutJob(v: RunnerView): string | null {
  if (!v.pod || v.busy || v.er?.job.jobRequestId || v.er?.job.jobId) return null;
  const runner = v.pod.containerStatuses.find((c) => c.name === RUNNER_CONTAINER);
  const t = runner?.terminated;
  if (!t || t.exitCode !== 0) return null;
  return `pod ${v.pod.metadata.name}: runner container exited 0 (${t.reason ?? 'no reason'}${t.message ? `: ${t.message.trim()}` : ''}) without taking a job`;
}

/** The runner version in a termination message, e.g. `Runner version v2.328.0 is deprecated`. */
export function versionIn(text: string): string | null {
  return /Runner version v?(\d+\.\d+\.\d+)/i.exec(text)?.[1] ?? null;
}

/**
 * Rule 8: runners of a scale set exit 0 without taking a job. Deleting them cannot help (ARC
 * replaces them with the same image), so nothing is deleted: the scale set is reported once per
 * version, and carrying the report out asks GitHub when that version stops working.
 */
export function deprecatedRunner(ctx: RuleContext): void {
  for (const v of ctx.c.runners) {
    if (!v.arcOwned || !isProvenArcRunner(v) || !v.scaleSet) continue;
    const evidence = exitedWithoutJob(v);
    if (!evidence) continue;
    const scope = runnerScope(v);
    if (!effectiveFor(ctx, scope).rules.deprecatedRunner.enabled) continue;
    const version = versionIn(evidence);
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
      reason: `runners of scale set ${v.scaleSet} exit 0 without taking a job, as a runner GitHub refuses (deprecated version) does: report it; deleting them would only loop`,
      budgetKeys: [],
    });
  }
}
