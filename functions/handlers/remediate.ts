import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { parseRemediateInput } from '../ingress/remediate-input.js';
import { createLogger, createMetrics } from '../config/observability.js';
import { engineFromEnvironment } from '../config/engine-wiring.js';
import type { EngineProvider } from '../config/engine-wiring.js';
import type { EngineReport } from '../engine/run-engine.js';
import { runEngine } from '../engine/run-engine.js';
import { engineObservability } from './engine-observability.js';

export interface RemediateHandlerOptions {
  engine: EngineProvider;
  logger: Logger;
  metrics: Metrics;
}

export type RemediateResult =
  { status: 'rejected'; reason: string } | ({ status: 'done' } & EngineReport);

/**
 * EventBridge target: observations, Kubernetes events, EC2 events, wake-ups. Unrecognized input
 * is logged and counted, never thrown (EventBridge would retry garbage); an unavailable API
 * throws, so the async retry and the DLQ take over.
 */
export function createRemediateHandler(options: RemediateHandlerOptions) {
  const { logger, metrics } = options;
  return middy(async (event: unknown, context: { getRemainingTimeInMillis(): number }) => {
    const setup = await options.engine(() => context.getRemainingTimeInMillis());
    const input = parseRemediateInput(
      event,
      setup.defaultCluster ? { defaultCluster: setup.defaultCluster } : {},
    );
    if (!input.ok) {
      logger.warn('input rejected', { reason: input.reason });
      metrics.addDimensions({ reason: 'unrecognized' });
      metrics.addMetric('InputRejected', MetricUnit.Count, 1);
      return { status: 'rejected', reason: input.reason } satisfies RemediateResult;
    }
    const report = await runEngine(input.trigger, {
      ...setup.deps,
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
      ...engineObservability(logger, metrics),
    });
    metrics.addDimensions({ trigger: input.trigger.kind });
    metrics.addMetric('EngineRun', MetricUnit.Count, 1);
    logger.info('engine run', {
      trigger: input.trigger.kind,
      recorded: report.recorded,
      actions: report.actions.length,
      held: report.held.length,
      wakeAt: report.wakeAt,
    });
    return { status: 'done', ...report } satisfies RemediateResult;
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}

export const handler = createRemediateHandler({
  engine: engineFromEnvironment(process.env),
  logger: createLogger('remediate'),
  metrics: createMetrics('remediate'),
});
