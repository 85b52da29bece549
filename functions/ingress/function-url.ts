import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import type { WebhookRequest, WebhookResponse } from '../ports/webhook.js';

export function fromFunctionUrlEvent(event: LambdaFunctionURLEvent): WebhookRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    headers[name.toLowerCase()] = value;
  return {
    method: event.requestContext?.http?.method ?? 'GET',
    headers,
    body: event.body,
    isBase64Encoded: event.isBase64Encoded ?? false,
  };
}

export function toFunctionUrlResult(response: WebhookResponse): LambdaFunctionURLResult {
  return {
    statusCode: response.statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(response.body),
  };
}
