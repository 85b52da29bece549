import { createHmac } from 'node:crypto';

/** `X-Hub-Signature-256`: `sha256=` and the HMAC-SHA256 hex of the raw body. */
export function signPayload(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
