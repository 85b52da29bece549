import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const SERVICE_NAME = 'runner-medic';
export const METRICS_NAMESPACE = 'RunnerMedic';

export function createLogger(functionName: string): Logger {
  return new Logger({ serviceName: SERVICE_NAME, persistentKeys: { function: functionName } });
}

export function createMetrics(functionName: string): Metrics {
  return new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE_NAME,
    defaultDimensions: { function: functionName },
    logger: metricsLogger(createLogger(functionName)),
  });
}

/**
 * Powertools Metrics warns on every invocation that emits no metric; for runner-medic that is
 * the normal case of an input with nothing to do, so it is a debug line, not a warning.
 */
function metricsLogger(logger: Logger) {
  return {
    debug: (message: string) => logger.debug(message),
    info: (message: string) => logger.info(message),
    error: (message: string) => logger.error(message),
    warn: (message: string) =>
      message.startsWith('No application metrics to publish')
        ? logger.debug(message)
        : logger.warn(message),
  };
}
