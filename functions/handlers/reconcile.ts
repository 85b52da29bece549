import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { createLogger, createMetrics } from '../config/observability.js';

const logger = createLogger('reconcile');
const metrics = createMetrics('reconcile');

/**
 * The scheduled, level-triggered sweep. Until the engine lands it only marks that it ran;
 * it lists nothing and changes nothing.
 */
export const handler = middy(async (event: ScheduledEvent) => {
  logger.info('sweep tick; remediation engine not enabled, no action taken', {
    scheduledAt: event.time,
  });
  metrics.addMetric('SweepRun', MetricUnit.Count, 1);
  return { status: 'idle', actions: 0 };
})
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
