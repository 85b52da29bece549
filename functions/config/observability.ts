import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** The service name and metrics namespace when the environment names none (local runs, tests). */
const SERVICE_NAME = 'runner-medic';
const METRICS_NAMESPACE = 'RunnerMedic';

type Env = Record<string, string | undefined>;

/**
 * serverless.yml sets POWERTOOLS_SERVICE_NAME per stage (`runner-medic-<stage>`): it is the
 * `service` dimension of every metric, which the stage's alarms and dashboard filter on, so two
 * stages in one account never share an alarm.
 */
const serviceNameOf = (env: Env): string => env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME;
const metricsNamespaceOf = (env: Env): string =>
  env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE;

export function createLogger(functionName: string, env: Env = process.env): Logger {
  return new Logger({
    serviceName: serviceNameOf(env),
    persistentKeys: { function: functionName },
  });
}

export function createMetrics(functionName: string, env: Env = process.env): Metrics {
  return new Metrics({
    namespace: metricsNamespaceOf(env),
    serviceName: serviceNameOf(env),
    defaultDimensions: { function: functionName },
    logger: metricsLogger(createLogger(functionName, env)),
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
