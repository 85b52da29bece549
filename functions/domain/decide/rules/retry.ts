import { subKey } from '../../model/idempotency-key.js';
import type { RuleContext } from './context.js';

/** Deleting a registration answers 422 while GitHub thinks its job runs (up to ~15 min). */
export const REGISTRATION_RETRY = { intervalSeconds: 60, forSeconds: 6 * 3600 } as const;

export type RetryState =
  | { state: 'go'; key: string; attempt: number }
  | { state: 'done' }
  | { state: 'gave-up' }
  | { state: 'wait'; at: number; retryOf: string; attempt: number };

const tryKey = (base: string, n: number) => subKey(base, 'try', n);

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
  const prefix = `${base}:try:`;
  const tries = ctx.facts.actions
    .filter((a) => a.key.startsWith(prefix))
    .map((a) => ({ a, n: Number(a.key.slice(prefix.length)) }))
    .filter((t) => Number.isInteger(t.n))
    .sort((x, y) => x.n - y.n);
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
