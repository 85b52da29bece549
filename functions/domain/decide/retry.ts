import { subKey } from '../model/idempotency-key.js';
import type { ActionRecord } from '../model/facts.js';
import type { RuleContext } from './context.js';

/** Deleting a registration answers 422 while GitHub thinks its job runs (up to ~15 min). */
export const REGISTRATION_RETRY = { intervalSeconds: 60, forSeconds: 6 * 3600 } as const;

export type RetryState =
  | { state: 'go'; key: string; attempt: number }
  | { state: 'done' }
  | { state: 'gave-up' }
  | { state: 'wait'; at: number; retryOf: string; attempt: number };

const tryKey = (base: string, n: number) => subKey(base, 'try', n);

/** The tries of an effect, keyed `<base>:try:<n>`, in order of n. */
function triesOf(actions: readonly ActionRecord[], base: string) {
  const prefix = `${base}:try:`;
  return actions
    .filter((a) => a.key.startsWith(prefix))
    .map((a) => ({ a, n: Number(a.key.slice(prefix.length)) }))
    .filter((t) => Number.isInteger(t.n))
    .sort((x, y) => x.n - y.n);
}

/**
 * Where an effect stands that may be refused for a while (403 already running, 422 busy): its
 * tries are keyed `<base>:try:<n>`. A claim, a success or a dry run ends it; a final refusal gives
 * up; a `retry-later` or `failed` try is retried every `intervalSeconds` for `forSeconds`.
 */
export function retryState(
  ctx: RuleContext,
  base: string,
  intervalSeconds: number,
  forSeconds: number,
): RetryState {
  const tries = triesOf(ctx.facts.actions, base);
  if (tries.length === 0) return { state: 'go', key: tryKey(base, 0), attempt: 0 };
  if (tries.some((t) => ['claimed', 'succeeded', 'dry-run'].includes(t.a.outcome)))
    return { state: 'done' };
  const last = tries[tries.length - 1];
  const first = tries[0];
  if (!last || !first || last.a.outcome === 'gave-up') return { state: 'gave-up' };
  const at = (last.a.finishedAt ?? last.a.claimedAt) + intervalSeconds * 1000;
  if (at > first.a.claimedAt + forSeconds * 1000) return { state: 'gave-up' };
  const next = last.n + 1;
  if (ctx.now < at) return { state: 'wait', at, retryOf: last.a.key, attempt: next };
  return { state: 'go', key: tryKey(base, next), attempt: next };
}

/** Outcomes after which a cancel is taken to have been sent (an `unknown` one may have acted). */
export const SENT_OUTCOMES = new Set(['claimed', 'succeeded', 'unknown', 'dry-run']);
/** Outcomes after which a refused cancel is tried again (500 Failed to cancel, 409 not yet queued). */
const RETRY_OUTCOMES = new Set(['retry-later', 'failed']);

type CancelStep =
  | { state: 'go'; key: string; attempt: number }
  | { state: 'sent'; at: number }
  | { state: 'wait'; at: number }
  | { state: 'stopped'; why: string };

/**
 * Where a cancel (or force-cancel) of one run attempt stands. Its tries are keyed `<base>:try:<n>`;
 * a refused try is retried after `intervalSeconds`, doubling, for `forSeconds` from the first.
 */
export function cancelStep(
  actions: readonly ActionRecord[],
  base: string,
  now: number,
  intervalSeconds: number,
  forSeconds: number,
): CancelStep {
  const tries = triesOf(actions, base);
  const first = tries[0];
  const last = tries[tries.length - 1];
  if (!first || !last) return { state: 'go', key: tryKey(base, 0), attempt: 0 };
  const sent = tries.find((t) => SENT_OUTCOMES.has(t.a.outcome));
  if (sent) return { state: 'sent', at: sent.a.finishedAt ?? sent.a.claimedAt };
  if (!RETRY_OUTCOMES.has(last.a.outcome))
    return { state: 'stopped', why: `GitHub answered ${last.a.outcome} to ${last.a.key}` };
  const at =
    (last.a.finishedAt ?? last.a.claimedAt) +
    intervalSeconds * 1000 * 2 ** Math.min(tries.length - 1, 10);
  if (at > first.a.claimedAt + forSeconds * 1000)
    return {
      state: 'stopped',
      why: `GitHub refused ${tries.length} tries of ${base} over ${forSeconds} s`,
    };
  if (now < at) return { state: 'wait', at };
  return { state: 'go', key: tryKey(base, last.n + 1), attempt: last.n + 1 };
}
