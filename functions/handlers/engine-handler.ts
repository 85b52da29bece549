import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { EngineProvider } from '../config/compose-engine.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import type { EngineLog, EngineMetrics } from '../ports/engine-reporting.js';

export interface EngineHandlerOptions {
  engine: EngineProvider;
  logger: Logger;
  metrics: Metrics;
}

interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

/**
 * A function that runs the engine (remediate, reconcile): `run` gets the invocation's engine,
 * bound to its remaining time and reporting through Powertools; the logger and the metrics are
 * flushed around it.
 */
export function engineHandler<Result>(
  options: EngineHandlerOptions,
  run: (event: unknown, engine: { deps: EngineDeps; defaultCluster?: string }) => Promise<Result>,
) {
  const { logger, metrics } = options;
  return middy(async (event: unknown, context: LambdaContext) => {
    const remainingTimeMs = () => context.getRemainingTimeInMillis();
    const setup = await options.engine(remainingTimeMs);
    const deps: EngineDeps = {
      ...setup.deps,
      remainingTimeMs,
      ...engineObservability(logger, metrics),
    };
    return run(event, { ...setup, deps });
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}

/** The engine's log and metrics ports on Powertools; each metric carries its own dimensions. */
function engineObservability(
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
      percent: (name, dimensions, value) => emit(name, dimensions, MetricUnit.Percent, value),
    },
  };
}
