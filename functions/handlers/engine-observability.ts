import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EngineLog, EngineMetrics } from '../ports/engine-reporting.js';

/** The engine's log and metrics ports on Powertools; each metric carries its own dimensions. */
export function engineObservability(
  logger: Logger,
  metrics: Metrics,
): { log: EngineLog; metrics: EngineMetrics } {
  const emit = (
    name: string,
    dimensions: Record<string, string>,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
  ) => {
    const single = metrics.singleMetric();
    single.addDimensions(dimensions);
    single.addMetric(name, unit, value);
  };
  return {
    log: {
      info: (message, fields) => logger.info(message, { ...fields }),
      warn: (message, fields) => logger.warn(message, { ...fields }),
    },
    metrics: {
      count: (name, dimensions) => emit(name, dimensions, MetricUnit.Count, 1),
      milliseconds: (name, dimensions, value) =>
        emit(name, dimensions, MetricUnit.Milliseconds, value),
    },
  };
}
