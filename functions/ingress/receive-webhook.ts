import type { SignatureVerifier } from '../ports/webhook.js';
import { createHash } from 'node:crypto';
import { MAX_DELIVERY_ID_LENGTH } from '../domain/model/github-objects.js';
import { DELIVERY_CLAIM_LEASE_SECONDS } from './delivery-lease.js';
import type { GithubObservation } from '../domain/model/observation.js';
import type { Clock } from '../ports/clock.js';
import type { ClaimOutcome, DeliveryLedger } from '../ports/delivery-ledger.js';
import { MAX_ENTRY_BYTES, entrySize } from '../ports/event-publisher.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { normalizeWebhook, observationEvent } from './normalize-webhook.js';
import type {
  RejectionReason,
  WebhookOutcome,
  WebhookRequest,
  WebhookResponse,
} from '../ports/webhook.js';

export interface ReceiveWebhookDeps {
  verifier: SignatureVerifier;
  ledger: DeliveryLedger;
  publisher: EventPublisher;
  clock: Clock;
  /** Largest body accepted, in bytes. */
  maxBodyBytes: number;
  /** How long a delivery id stays claimed (GitHub redelivers for up to 3 days, GHES 7). */
  deliveryTtlSeconds: number;
}

const DELIVERY_ID_PATTERN = /^[A-Za-z0-9._:-]+$/;
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

export interface ReceiveWebhookResult {
  response: WebhookResponse;
  outcome: WebhookOutcome;
  observation?: GithubObservation;
  /** Set when a publish or store failure caused the 500. */
  error?: unknown;
}

const REJECTION_STATUS: Record<RejectionReason, number> = {
  'method-not-allowed': 405,
  'body-too-large': 413,
  'missing-signature': 401,
  'bad-signature': 401,
  'missing-header': 400,
  'bad-delivery-id': 400,
  'broken-json': 400,
  'invalid-payload': 400,
  'event-too-large': 413,
};

/**
 * GitHub delivery → verified, deduplicated, stored and published observation.
 * Bad input gets a 4xx and leaves no trace; only a store or bus failure is a 5xx.
 */
export async function receiveWebhook(
  request: WebhookRequest,
  deps: ReceiveWebhookDeps,
): Promise<ReceiveWebhookResult> {
  const delivery = await readDelivery(request, deps);
  if ('response' in delivery) return delivery;
  const { deliveryId, event, raw, payload } = delivery;
  const reject = rejecter(deliveryId);

  const receivedAt = new Date(deps.clock.now()).toISOString();
  const normalized = normalizeWebhook({ event, deliveryId, receivedAt }, payload);
  if (normalized.kind === 'ignored') {
    return {
      response: {
        statusCode: 202,
        body: { status: 'ignored', deliveryId, reason: normalized.reason },
      },
      outcome: { status: 'ignored', reason: normalized.reason },
    };
  }
  if (normalized.kind === 'invalid') {
    return reject(
      'invalid-payload',
      `payload is missing or has invalid fields: ${normalized.missing.join(', ')}`,
    );
  }
  const observation = normalized.observation;
  if (entrySize(observationEvent(observation)) > MAX_ENTRY_BYTES) {
    return reject(
      'event-too-large',
      `observation exceeds the bus entry limit of ${MAX_ENTRY_BYTES} bytes`,
    );
  }
  return claimAndPublish({ deliveryId, event, observation, raw }, deps);
}

const rejecter =
  (deliveryId: string | null) =>
  (reason: RejectionReason, detail: string): ReceiveWebhookResult => ({
    response: {
      statusCode: REJECTION_STATUS[reason],
      body: { status: 'rejected', deliveryId, reason: detail },
    },
    outcome: { status: 'rejected', reason },
  });

/** A delivery whose signature, headers and JSON are good; or the rejection that says why not. */
async function readDelivery(
  request: WebhookRequest,
  deps: ReceiveWebhookDeps,
): Promise<
  ReceiveWebhookResult | { deliveryId: string; event: string; raw: string; payload: unknown }
> {
  const deliveryId = request.headers['x-github-delivery'] || null;
  const reject = rejecter(deliveryId);
  if (request.method.toUpperCase() !== 'POST') {
    return reject('method-not-allowed', `method ${request.method} is not allowed; use POST`);
  }
  const raw = decodeBody(request, deps.maxBodyBytes);
  if (raw === undefined) {
    return reject('body-too-large', `body exceeds the limit of ${deps.maxBodyBytes} bytes`);
  }
  const signature = request.headers['x-hub-signature-256'];
  if (!signature) return reject('missing-signature', 'X-Hub-Signature-256 header is missing');
  if (!(await verifySafely(deps.verifier, raw, signature))) {
    return reject('bad-signature', 'signature does not match the body');
  }

  const event = request.headers['x-github-event'];
  if (!event) return reject('missing-header', 'X-GitHub-Event header is missing');
  if (!deliveryId) return reject('missing-header', 'X-GitHub-Delivery header is missing');
  if (deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
    return reject(
      'bad-delivery-id',
      `X-GitHub-Delivery is ${deliveryId.length} characters; at most ${MAX_DELIVERY_ID_LENGTH} are accepted`,
    );
  }
  if (!DELIVERY_ID_PATTERN.test(deliveryId)) {
    return reject('bad-delivery-id', 'X-GitHub-Delivery may hold only letters, digits and . _ : -');
  }

  const json = jsonOf(raw, request.headers['content-type']);
  if (json === undefined) {
    return reject('broken-json', 'form-encoded body has no payload field');
  }
  try {
    return { deliveryId, event, raw, payload: JSON.parse(json) };
  } catch {
    return reject('broken-json', 'body is not valid JSON');
  }
}

/** Claims the delivery id in the ledger, publishes the observation, and marks it published. */
async function claimAndPublish(
  delivery: { deliveryId: string; event: string; observation: GithubObservation; raw: string },
  deps: ReceiveWebhookDeps,
): Promise<ReceiveWebhookResult> {
  const { deliveryId, event, observation, raw } = delivery;
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const record = {
    deliveryId,
    event,
    observation,
    bodyDigest: bodyDigest(raw),
    expiresAt: nowSeconds + deps.deliveryTtlSeconds,
  };
  let claim: ClaimOutcome;
  try {
    // Past the lease the holder was stopped at its timeout: a redelivery takes the claim over.
    claim = await deps.ledger.claim(record, nowSeconds, DELIVERY_CLAIM_LEASE_SECONDS);
  } catch (error) {
    return serverError(deliveryId, 'store-failed', error);
  }
  if (claim.status === 'duplicate') return duplicate(deliveryId, claim);

  try {
    await deps.publisher.publish([observationEvent(observation)]);
  } catch (error) {
    try {
      await deps.ledger.release(record);
    } catch (releaseError) {
      return serverError(deliveryId, 'publish-failed', new AggregateError([error, releaseError]));
    }
    return serverError(deliveryId, 'publish-failed', error);
  }

  let markError: unknown;
  try {
    await deps.ledger.markPublished(record, nowSeconds);
  } catch (error) {
    // Published but still pending in the ledger: the sweep publishes it once more, which the
    // engine absorbs (the bus is at-least-once anyway). Not a reason to make GitHub redeliver.
    markError = error;
  }

  return {
    response: { statusCode: 202, body: { status: 'accepted', deliveryId } },
    outcome: { status: 'accepted', kind: observation.kind },
    observation,
    ...(markError ? { error: markError } : {}),
  };
}

function duplicate(
  deliveryId: string,
  claim: Extract<ClaimOutcome, { status: 'duplicate' }>,
): ReceiveWebhookResult {
  const reason =
    claim.reason === 'same-body'
      ? `same body as delivery ${claim.original}`
      : claim.reason === 'in-flight'
        ? 'being processed by another invocation'
        : undefined;
  return {
    response: {
      statusCode: 202,
      body: { status: 'duplicate', deliveryId, ...(reason ? { reason } : {}) },
    },
    outcome: { status: 'duplicate', reason: claim.reason },
  };
}

/** SHA-256 of the signed body, the key that recognises a replay under another delivery id. */
function bodyDigest(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/**
 * The JSON text of a delivery. An App or hook set to `application/x-www-form-urlencoded` sends
 * `payload=<url-encoded JSON>`; the signature covers that raw form body, which was verified.
 */
function jsonOf(raw: string, contentType: string | undefined): string | undefined {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== FORM_CONTENT_TYPE) return raw;
  return new URLSearchParams(raw).get('payload') ?? undefined;
}

function serverError(
  deliveryId: string,
  reason: 'store-failed' | 'publish-failed',
  error: unknown,
): ReceiveWebhookResult {
  return {
    response: {
      statusCode: 500,
      body: { status: 'error', deliveryId, reason: `${reason}; redeliver to retry` },
    },
    outcome: { status: 'error', reason },
    error,
  };
}

/** The raw body as GitHub signed it, or undefined when it is over the limit. */
function decodeBody(request: WebhookRequest, maxBytes: number): string | undefined {
  const body = request.body ?? '';
  if (!request.isBase64Encoded) {
    return Buffer.byteLength(body, 'utf8') > maxBytes ? undefined : body;
  }
  if (Math.floor((body.length * 3) / 4) > maxBytes + 2) return undefined;
  const bytes = Buffer.from(body, 'base64');
  return bytes.length > maxBytes ? undefined : bytes.toString('utf8');
}

async function verifySafely(verifier: SignatureVerifier, raw: string, signature: string) {
  try {
    return await verifier.verify(raw, signature);
  } catch {
    return false;
  }
}
