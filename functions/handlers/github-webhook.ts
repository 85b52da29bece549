import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { ingressFromEnvironment } from '../config/compose-ingress.js';
import { createLogger, createMetrics } from '../config/observability.js';
import { fromFunctionUrlEvent, toFunctionUrlResult } from '../ingress/function-url.js';
import { receiveWebhook } from '../ingress/receive-webhook.js';
import type { ReceiveWebhookDeps, ReceiveWebhookResult } from '../ingress/receive-webhook.js';

export interface GithubWebhookHandlerOptions {
  /** Resolves the ingress dependencies; called per invocation, cached by the provider. */
  ingress: () => Promise<ReceiveWebhookDeps>;
  logger: Logger;
  metrics: Metrics;
}

/** The github-webhook Lambda (Function URL): verify, dedupe, store, publish, answer. */
export function createGithubWebhookHandler(options: GithubWebhookHandlerOptions) {
  const { logger, metrics } = options;

  const handle = async (event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> => {
    const request = fromFunctionUrlEvent(event);
    // POWERTOOLS_LOGGER_LOG_EVENT is honoured, but never with the signature or the body.
    if (logger.shouldLogEvent()) {
      logger.info('Lambda invocation event', { event: redactedEvent(event) });
    }
    const deliveryId = request.headers['x-github-delivery'] ?? null;
    if (deliveryId) logger.setCorrelationId(deliveryId);
    logger.appendKeys({ githubEvent: request.headers['x-github-event'] ?? null });

    let result: ReceiveWebhookResult;
    try {
      result = await receiveWebhook(request, await options.ingress());
    } catch (error) {
      logger.error('webhook ingress is not configured', { error: errorSummary(error) });
      metrics.addDimensions({ outcome: 'error', reason: 'configuration' });
      metrics.addMetric('WebhookDelivery', MetricUnit.Count, 1);
      return toFunctionUrlResult({
        statusCode: 500,
        body: { status: 'error', deliveryId, reason: 'ingress unavailable; redeliver to retry' },
      });
    }

    const { outcome, response } = result;
    const reason = 'reason' in outcome ? outcome.reason : 'kind' in outcome ? outcome.kind : 'none';
    metrics.addDimensions({ outcome: outcome.status, reason });
    metrics.addMetric('WebhookDelivery', MetricUnit.Count, 1);
    const fields = { status: outcome.status, reason, statusCode: response.statusCode };
    if (result.error && outcome.status === 'accepted')
      logger.warn('webhook delivery published but not marked so; the sweep will publish it again', {
        ...fields,
        error: errorSummary(result.error),
      });
    else if (result.error)
      logger.error('webhook delivery failed', { ...fields, error: errorSummary(result.error) });
    else if (outcome.status === 'rejected') logger.warn('webhook delivery rejected', fields);
    else logger.info('webhook delivery', fields);
    return toFunctionUrlResult(response);
  };

  return middy(handle)
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics));
}

/** Header names whose values are secrets or proofs of one; never logged. */
const SECRET_HEADERS = new Set([
  'x-hub-signature-256',
  'x-hub-signature',
  'authorization',
  'cookie',
]);

/** The invocation event without the signature headers or the body (its size is kept). */
export function redactedEvent(event: LambdaFunctionURLEvent) {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    headers[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '[redacted]' : value;
  }
  return {
    rawPath: event.rawPath,
    requestContext: {
      requestId: event.requestContext?.requestId,
      http: event.requestContext?.http,
    },
    headers,
    isBase64Encoded: event.isBase64Encoded,
    body: `[redacted: ${event.body?.length ?? 0} characters]`,
  };
}

function errorSummary(error: unknown) {
  if (!(error instanceof Error)) return { message: String(error) };
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return { name: error.name, message: error.message, cause };
}

export const handler = createGithubWebhookHandler({
  ingress: ingressFromEnvironment(process.env),
  logger: createLogger('github-webhook'),
  metrics: createMetrics('github-webhook'),
});
