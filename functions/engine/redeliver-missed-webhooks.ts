import type { DeliveryLedger } from '../ports/delivery-ledger.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { GithubGateway, WebhookDeliveryAttempt } from '../ports/github-gateway.js';

/** How far back the sweep looks, and how often it asks for one delivery again. */
const LOOK_BACK_MS = 60 * 60_000;
const MAX_REDELIVERIES = 3;
/** Give a delivery (or its last redelivery) this long to land before asking again. */
const SETTLE_MS = 60_000;
/**
 * The attempts already judged end at this attempt id (a sweep cursor: `namespaceIndex` holds
 * it). The next sweep reads back only to it, not through the whole look-back.
 */
const CURSOR = 'webhook-deliveries';

/**
 * GitHub never redelivers on its own, and a queued job gets no second webhook: a delivery
 * that never reached runner-medic (or got an error) would leave its job unknown. The sweep asks
 * GitHub to redeliver every such delivery not in the ledger, a few times at most. It reads the
 * attempts newer than its cursor; the cursor stops before the oldest delivery still unsettled
 * (failed, not yet redelivered its last time), so that one's later attempts are judged with it.
 */
export async function redeliverMissedWebhooks(
  github: GithubGateway,
  ledger: DeliveryLedger,
  store: Pick<FactsStore, 'sweepCursor' | 'setSweepCursor'>,
  now: number,
): Promise<string[]> {
  const cursor = await store.sweepCursor(CURSOR);
  const attempts = await github.listDeliveryAttempts(now - LOOK_BACK_MS, cursor?.namespaceIndex);
  const byGuid = new Map<string, WebhookDeliveryAttempt[]>();
  for (const a of attempts) byGuid.set(a.guid, [...(byGuid.get(a.guid) ?? []), a]);

  const asked: string[] = [];
  let unsettled = Infinity;
  for (const [guid, tries] of byGuid) {
    if (tries.some((t) => t.statusCode >= 200 && t.statusCode < 300)) continue;
    if (tries.filter((t) => t.redelivery).length >= MAX_REDELIVERIES) continue;
    if (await ledger.isClaimed(guid, Math.floor(now / 1000))) continue;
    unsettled = Math.min(unsettled, ...tries.map((t) => t.id - 1));
    const latest = tries.reduce((a, b) => (b.deliveredAt > a.deliveredAt ? b : a));
    if (now - latest.deliveredAt < SETTLE_MS) continue;
    const result = await github.redeliver(latest.id);
    if (result.result === 'done') asked.push(guid);
  }
  const newest = Math.max(cursor?.namespaceIndex ?? 0, ...attempts.map((a) => a.id));
  const next = Math.min(newest, unsettled);
  if (attempts.length > 0 && next !== cursor?.namespaceIndex)
    await store.setSweepCursor(CURSOR, { namespaceIndex: next, passStartedAt: null }, now);
  return asked;
}
