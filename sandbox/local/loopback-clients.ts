import { EKSClient } from '@aws-sdk/client-eks';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { LineWriter } from '../../functions/adapters/bus/stream-publisher.js';
import type { ClientFactories } from '../../functions/config/compose-engine.js';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import type { Clock } from '../../functions/ports/clock.js';

/** Loopback servers (dynalite, the twins) take any credentials; these name no real account. */
const LOOPBACK = {
  region: 'eu-west-1',
  credentials: { accessKeyId: 'loopback', secretAccessKey: 'loopback' },
};

export interface LoopbackOptions {
  /** Tries per EventBridge call (the SDK's default is 3). @default 1 */
  eventBridgeAttempts?: number;
  stdout?: LineWriter;
}

/**
 * The client factories of tests, the scenarios and `npm start`: every endpoint on loopback
 * (dynalite, the EventBridge twin, the GitHub twin), time from `clock`, and no real waits
 * between retries or between GitHub writes.
 */
export function loopbackClients(clock: Clock, options: LoopbackOptions = {}): ClientFactories {
  return {
    clock,
    documents: (endpoint) => createDocumentClient({ ...LOOPBACK, region: 'local', endpoint }),
    eventBridge: (endpoint) =>
      new EventBridgeClient({
        ...LOOPBACK,
        endpoint,
        maxAttempts: options.eventBridgeAttempts ?? 1,
      }),
    ssm: () => new SSMClient(LOOPBACK),
    secretsManager: () => new SecretsManagerClient(LOOPBACK),
    sqs: () => new SQSClient(LOOPBACK),
    eks: {
      client: (region) => new EKSClient({ ...LOOPBACK, region }),
      credentials: async () => LOOPBACK.credentials,
    },
    stdout: options.stdout ?? process.stdout,
    githubPacing: { writeSpacingMs: 0, retryBaseMs: 0, rateLimitSecondMs: 0 },
    busSleep: async () => undefined,
  };
}
