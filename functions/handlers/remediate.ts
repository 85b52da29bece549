import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseRemediateInput } from '../ingress/remediate-input.js';
import { engineFromEnvironment } from '../config/compose-engine.js';
import { createLogger, createMetrics } from '../config/observability.js';
import type { EngineReport } from '../engine/run-engine.js';
import { runEngine } from '../engine/run-engine.js';
import type { EngineHandlerOptions } from './engine-handler.js';
import { engineHandler } from './engine-handler.js';

type RemediateResult = { status: 'rejected'; reason: string } | ({ status: 'done' } & EngineReport);

/**
 * EventBridge target: observations, Kubernetes events, EC2 events, wake-ups. Unrecognized input
 * is logged and counted, never thrown (EventBridge would retry garbage); an unavailable API
 * throws, so the async retry and the DLQ take over.
 */
export function createRemediateHandler(options: EngineHandlerOptions) {
  const { logger, metrics } = options;
  return engineHandler(options, async (event, { deps, defaultCluster }) => {
    const input = parseRemediateInput(event, defaultCluster ? { defaultCluster } : {});
    if (!input.ok) {
      logger.warn('input rejected', { reason: input.reason });
      metrics.addDimensions({ reason: 'unrecognized' });
      metrics.addMetric('InputRejected', MetricUnit.Count, 1);
      return { status: 'rejected', reason: input.reason } satisfies RemediateResult;
    }
    const report = await runEngine(input.trigger, deps);
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
  });
}

export const handler = createRemediateHandler({
  engine: engineFromEnvironment(process.env),
  logger: createLogger('remediate'),
  metrics: createMetrics('remediate'),
});
