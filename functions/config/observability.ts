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
  });
}
