import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { EngineProvider } from '../config/engine-wiring.js';
import { engineFromEnvironment } from '../config/engine-wiring.js';
import { createLogger, createMetrics } from '../config/observability.js';
import { runEngine } from '../engine/run-engine.js';
import { engineObservability } from './engine-observability.js';

export interface ReconcileHandlerOptions {
  engine: EngineProvider;
  logger: Logger;
  metrics: Metrics;
}

/** The scheduled, level-triggered sweep: the same engine over what the APIs show now. */
export function createReconcileHandler(options: ReconcileHandlerOptions) {
  const { logger, metrics } = options;
  return middy(async (_event: unknown, context: { getRemainingTimeInMillis(): number }) => {
    const setup = await options.engine(() => context.getRemainingTimeInMillis());
    const report = await runEngine(
      { kind: 'sweep' },
      {
        ...setup.deps,
        remainingTimeMs: () => context.getRemainingTimeInMillis(),
        ...engineObservability(logger, metrics),
      },
    );
    metrics.addMetric('SweepRun', MetricUnit.Count, 1);
    logger.info('sweep', {
      actions: report.actions.length,
      held: report.held.length,
      wakeAt: report.wakeAt,
    });
    return { status: 'done' as const, ...report };
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}

export const handler = createReconcileHandler({
  engine: engineFromEnvironment(process.env),
  logger: createLogger('reconcile'),
  metrics: createMetrics('reconcile'),
});
