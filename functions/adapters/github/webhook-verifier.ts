import { Webhooks } from '@octokit/webhooks';
import type { SignatureVerifier } from '../../ports/webhook.js';
import { RunnerMedicError } from '../../ports/errors.js';

/**
 * Verifies `X-Hub-Signature-256` with @octokit/webhooks. Several secrets are tried in order,
 * so a secret can be rotated without dropping deliveries signed with the old one.
 */
export function createWebhookVerifier(secrets: readonly string[]): SignatureVerifier {
  if (secrets.length === 0)
    throw new RunnerMedicError('config', 'at least one webhook secret is required');
  const verifiers = secrets.map((secret) => new Webhooks({ secret }));
  return {
    async verify(rawBody, signature) {
      for (const webhooks of verifiers) {
        if (await webhooks.verify(rawBody, signature)) return true;
      }
      return false;
    },
  };
}
