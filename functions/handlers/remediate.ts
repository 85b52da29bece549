import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { createLogger, createMetrics } from '../config/observability.js';

const logger = createLogger('remediate');
const metrics = createMetrics('remediate');

/**
 * EventBridge target for observations, Kubernetes events and EC2 events. The remediation
 * engine is not wired in yet: this records what arrives and takes no action.
 */
export const handler = middy(async (event: EventBridgeEvent<string, unknown>) => {
  logger.info('input received; remediation engine not enabled, no action taken', {
    source: event.source,
    detailType: event['detail-type'],
    eventId: event.id,
  });
  metrics.addDimensions({ source: event.source ?? 'unknown' });
  metrics.addMetric('RemediateInput', MetricUnit.Count, 1);
  return { status: 'observed', actions: 0 };
})
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
