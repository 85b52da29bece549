/**
 * A github-webhook invocation in its own process, wired from the environment as in AWS, that
 * stops dead at a chosen point so the parent test can SIGKILL it there. It prints `at <point>`
 * when it reaches the point, then waits forever.
 *   CRASH_AT=after-claim  the claim is stored, nothing is published yet
 *   REQUEST               the WebhookRequest as JSON
 *   CLOCK_MS              the time the invocation sees
 */
import { awsClients } from '../../../../functions/config/compose-engine.js';
import { ingressFromEnvironment } from '../../../../functions/config/compose-ingress.js';
import { receiveWebhook } from '../../../../functions/ingress/receive-webhook.js';
import type { WebhookRequest } from '../../../../functions/ports/webhook.js';
import type { DeliveryLedger } from '../../../../functions/ports/delivery-ledger.js';

const clockMs = Number(process.env.CLOCK_MS);
const clock = { now: () => clockMs };
const request = JSON.parse(process.env.REQUEST ?? '{}') as WebhookRequest;
const crashAt = process.env.CRASH_AT;

const forever = () => new Promise<never>(() => setInterval(() => undefined, 60_000));

const deps = await ingressFromEnvironment(process.env, awsClients(clock))();
const ledger: DeliveryLedger = {
  claim: async (...args) => {
    const outcome = await deps.ledger.claim(...args);
    if (crashAt === 'after-claim') {
      process.stdout.write('at after-claim\n');
      return forever();
    }
    return outcome;
  },
  markPublished: (...args) => deps.ledger.markPublished(...args),
  release: (...args) => deps.ledger.release(...args),
  isClaimed: (...args) => deps.ledger.isClaimed(...args),
  listUnpublished: (...args) => deps.ledger.listUnpublished(...args),
};
const result = await receiveWebhook(request, { ...deps, ledger });
process.stdout.write(`done ${JSON.stringify(result.response)}\n`);
