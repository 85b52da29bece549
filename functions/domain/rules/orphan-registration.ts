import { runnerSetPrefix, type RunnerView } from '../correlate.js';
import { idempotencyKey } from '../idempotency-key.js';
import { effectiveFor, propose, runnerScope, wake, type RuleContext } from './context.js';
import { REGISTRATION_RETRY, retryState } from './retry.js';

/**
 * Rule 5: a GitHub runner registration offline past `graceSeconds`, named like a runner of an
 * EphemeralRunnerSet we know, with no EphemeralRunner in a listing taken since it went offline
 * ⇒ delete it. `422 still running a job` is retried later.
 */
export function orphanRegistration(ctx: RuleContext): void {
  const homes = new Map<string, RunnerView[]>();
  for (const v of ctx.c.runners) {
    const p = runnerSetPrefix(v.name);
    if (p && v.arcOwned && (v.pod || v.er)) homes.set(p, [...(homes.get(p) ?? []), v]);
  }
  const erNames = new Set(ctx.facts.ephemeralRunners.map((er) => er.metadata.name));
  for (const reg of ctx.facts.registrations) {
    if (reg.status !== 'offline' || reg.offlineSince === null || erNames.has(reg.name)) continue;
    const prefix = runnerSetPrefix(reg.name);
    const home = prefix ? homes.get(prefix) : undefined;
    const first = home?.[0];
    if (!home || !first) continue;
    const offlineSince = reg.offlineSince;
    const listedSince = home.every((h) =>
      ctx.facts.listings.some(
        (l) => l.cluster === h.cluster && l.namespace === h.namespace && l.at >= offlineSince,
      ),
    );
    if (!listedSince) continue;
    const repo = 'repo' in reg.owner ? reg.owner.repo : null;
    const scope = { ...runnerScope(first, repo), runnerName: reg.name };
    const rules = effectiveFor(ctx, scope).rules.orphanRegistration;
    if (!rules.enabled) continue;
    const due = offlineSince + rules.graceSeconds * 1000;
    if (ctx.now < due) {
      wake(ctx, due);
      continue;
    }
    const st = retryState(
      ctx,
      idempotencyKey('delete-registration', reg.id),
      REGISTRATION_RETRY.intervalSeconds,
      REGISTRATION_RETRY.forSeconds,
    );
    if (st.state === 'wait') wake(ctx, st.at);
    if (st.state !== 'go') continue;
    propose(ctx, {
      rule: 'orphanRegistration',
      key: st.key,
      target: {
        kind: 'delete-runner-registration',
        owner: reg.owner,
        installationId: reg.installationId,
        runnerId: reg.id,
        runnerName: reg.name,
      },
      scope,
      cause: null,
      signal: {
        source: 'listing',
        detail: `registration ${reg.name} offline, no EphemeralRunner of that name`,
      },
      reason: `runner registration ${reg.name} (${reg.id}) offline for ${Math.round((ctx.now - offlineSince) / 1000)} s with no EphemeralRunner: delete it`,
      budgetKeys: [],
    });
  }
}
