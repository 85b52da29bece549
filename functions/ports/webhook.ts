/** A webhook HTTP request, independent of how it arrived (Lambda Function URL, local server). */
export interface WebhookRequest {
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  body: string | undefined;
  isBase64Encoded: boolean;
}

type WebhookStatus = 'accepted' | 'duplicate' | 'ignored' | 'rejected' | 'error';

interface WebhookResponseBody {
  status: WebhookStatus;
  deliveryId: string | null;
  reason?: string;
}

export interface WebhookResponse {
  statusCode: number;
  body: WebhookResponseBody;
}

/** Why a delivery ended as it did: the metric dimension and the log field. */
export type WebhookOutcome =
  | { status: 'accepted'; kind: string }
  | { status: 'duplicate'; reason: 'published' | 'in-flight' | 'same-body' }
  | { status: 'ignored'; reason: string }
  | { status: 'rejected'; reason: RejectionReason }
  | { status: 'error'; reason: 'store-failed' | 'publish-failed' };

export type RejectionReason =
  | 'method-not-allowed'
  | 'body-too-large'
  | 'missing-signature'
  | 'bad-signature'
  | 'missing-header'
  | 'bad-delivery-id'
  | 'broken-json'
  | 'invalid-payload'
  | 'event-too-large';

export interface SignatureVerifier {
  /** True when `signature` (`sha256=…`) matches the raw body under any current secret. */
  verify(rawBody: string, signature: string): Promise<boolean>;
}
