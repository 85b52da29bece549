import { defineRule, ruleSettings, seconds } from '../rule.js';
import type { ErJobCacheEntry, RunnerRegistration } from '../../model/facts.js';
import { idempotencyKey } from '../../model/idempotency-key.js';
import { effectiveFor, propose, runnerScope, wake, type RuleContext } from '../context.js';
import { REGISTRATION_RETRY, retryState } from '../retry.js';

/**
 * Rule 5: a GitHub runner registration offline past `graceSeconds` that was provably ARC's (an
 * EphemeralRunner of ARC seen earlier carried this registration's runner id and name, and the
 * registration wears that runner's scale-set label), with no EphemeralRunner left in a listing
 * taken since it went offline ⇒ delete it. A name alone proves nothing: an org's own VM runner may
 * be named like a scale set's runners. `422 still running a job` is retried later.
 */
export const orphanRegistration = defineRule({
  number: 5,
  name: 'orphanRegistration',
  id: 'rule-5-orphan-registration',
  settings: ruleSettings({
    /** Delete a provably-ARC registration offline this long with no EphemeralRunner left. */
    graceSeconds: seconds,
  }),
  defaults: { enabled: true, dryRun: false, graceSeconds: 900 },
  decide(ctx: RuleContext): void {
    const erNames = new Set(ctx.facts.ephemeralRunners.map((er) => er.metadata.name));
    for (const reg of ctx.facts.registrations) {
      if (reg.status !== 'offline' || reg.offlineSince === null || erNames.has(reg.name)) continue;
      const former = formerArcRunner(ctx, reg);
      if (!former) continue;
      const first = ctx.correlation.runners.find(
        (v) =>
          v.cluster === former.cluster &&
          v.namespace === former.namespace &&
          v.name === former.runnerName,
      );
      if (!first?.arcOwned) continue;
      const offlineSince = reg.offlineSince;
      const listedSince = ctx.facts.listings.some(
        (l) =>
          l.cluster === former.cluster && l.namespace === former.namespace && l.at >= offlineSince,
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
          detail: `registration ${reg.name} (runner id ${reg.id}, scale set ${former.scaleSet}) offline, its EphemeralRunner gone from ${former.namespace}`,
        },
        reason: `runner registration ${reg.name} (${reg.id}) offline for ${Math.round((ctx.now - offlineSince) / 1000)} s with no EphemeralRunner: delete it`,
        budgetKeys: [],
      });
    }
  },
});

/**
 * The ARC EphemeralRunner this registration belonged to, by identity: the EphemeralRunner cached
 * when first seen (ARC's own custom resource) whose `status.runnerId` is the registration's id,
 * with the same name and a scale set the registration carries as a label (ARC registers
 * scale-set runners with the scale set's name as their label). Its runner view must still count
 * as ARC's (no live object or loss says otherwise).
 */
function formerArcRunner(
  ctx: RuleContext,
  reg: RunnerRegistration,
): (ErJobCacheEntry & { scaleSet: string }) | undefined {
  const match = ctx.facts.erJobCache.find(
    (c) =>
      c.runnerId === reg.id &&
      c.runnerName === reg.name &&
      c.scaleSet !== null &&
      reg.labels.includes(c.scaleSet),
  );
  return match && match.scaleSet !== null ? { ...match, scaleSet: match.scaleSet } : undefined;
}
