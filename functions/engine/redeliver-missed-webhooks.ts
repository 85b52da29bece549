import type { DeliveryLedger } from '../ports/delivery-ledger.js';
import type { GithubGateway } from '../ports/github-gateway.js';

/** How far back the sweep looks, and how often it asks for one delivery again. */
const LOOK_BACK_MS = 60 * 60_000;
const MAX_REDELIVERIES = 3;
/** Give a delivery (or its last redelivery) this long to land before asking again. */
const SETTLE_MS = 60_000;

/**
 * GitHub never redelivers on its own, and a queued job gets no second webhook: a delivery
 * that never reached runner-medic (or got an error) would leave its job unknown. The sweep asks
 * GitHub to redeliver every such delivery not in the ledger, a few times at most.
 */
export async function redeliverMissedWebhooks(
  github: GithubGateway,
  ledger: DeliveryLedger,
  now: number,
): Promise<string[]> {
  const attempts = await github.listDeliveryAttempts(now - LOOK_BACK_MS);
  const byGuid = new Map<string, typeof attempts>();
  for (const a of attempts) byGuid.set(a.guid, [...(byGuid.get(a.guid) ?? []), a]);

  const asked: string[] = [];
  for (const [guid, tries] of byGuid) {
    if (tries.some((t) => t.statusCode >= 200 && t.statusCode < 300)) continue;
    const latest = tries.reduce((a, b) => (b.deliveredAt > a.deliveredAt ? b : a));
    if (now - latest.deliveredAt < SETTLE_MS) continue;
    if (tries.filter((t) => t.redelivery).length >= MAX_REDELIVERIES) continue;
    if (await ledger.isClaimed(guid, Math.floor(now / 1000))) continue;
    const result = await github.redeliver(latest.id);
    if (result.result === 'done') asked.push(guid);
  }
  return asked;
}
