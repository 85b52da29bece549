import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { engineFromEnvironment } from '../config/compose-engine.js';
import { createLogger, createMetrics } from '../config/observability.js';
import { runEngine } from '../engine/run-engine.js';
import type { EngineHandlerOptions } from './engine-handler.js';
import { engineHandler } from './engine-handler.js';

/** The scheduled, level-triggered sweep: the same engine over what the APIs show now. */
export function createReconcileHandler(options: EngineHandlerOptions) {
  const { logger, metrics } = options;
  return engineHandler(options, async (_event, { deps }) => {
    const report = await runEngine({ kind: 'sweep' }, deps);
    metrics.addMetric('SweepRun', MetricUnit.Count, 1);
    logger.info('sweep', {
      actions: report.actions.length,
      held: report.held.length,
      wakeAt: report.wakeAt,
    });
    return { status: 'done' as const, ...report };
  });
}

export const handler = createReconcileHandler({
  engine: engineFromEnvironment(process.env),
  logger: createLogger('reconcile'),
  metrics: createMetrics('reconcile'),
});
