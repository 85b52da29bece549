import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { Clock } from '../../ports/clock.js';
import { RunnerMedicError } from '../../ports/errors.js';
import type { SecretSource } from '../../ports/secret-source.js';

export interface SecretClients {
  ssm?: () => SSMClient;
  secretsManager?: () => SecretsManagerClient;
}

type AwsSecret = Exclude<SecretSource, { kind: 'env' }>;

/** One read through a Powertools provider: from its cache, or from AWS when `forceFetch`. */
type ProviderRead = (options: { maxAge: number; forceFetch: boolean }) => Promise<unknown>;

/**
 * Reads a secret value from the environment, SSM Parameter Store (SecureString) or Secrets
 * Manager, and caches it per container for `cacheSeconds` so a rotation is picked up.
 *
 * Powertools' parameter providers make the AWS calls and hold the value; `clock` says when it
 * is stale (a forced fetch), so tests drive a rotation with the simulated clock. Reads that
 * overlap share one call.
 */
export function createSecretReader(
  source: SecretSource,
  clients: SecretClients,
  clock: Clock,
  cacheSeconds: number,
): () => Promise<string> {
  if (source.kind === 'env') {
    const value = source.value;
    return () => Promise.resolve(value);
  }
  let read: ProviderRead | undefined;
  let fetchedAt: number | undefined;
  let inFlight: Promise<string> | undefined;
  const readNow = async (): Promise<string> => {
    read ??= providerRead(source, clients);
    const now = clock.now();
    const stale = fetchedAt === undefined || now >= fetchedAt + cacheSeconds * 1000;
    let value: unknown;
    try {
      value = await read({ maxAge: cacheSeconds, forceFetch: stale });
    } catch (error) {
      // Powertools wraps the AWS error; callers read its name (ParameterNotFound, …).
      throw error instanceof GetParameterError && error.cause !== undefined ? error.cause : error;
    }
    if (typeof value !== 'string' || value === '') throw noValue(source);
    if (stale) fetchedAt = now;
    return value;
  };
  return () => {
    inFlight ??= readNow().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

function providerRead(source: AwsSecret, clients: SecretClients): ProviderRead {
  switch (source.kind) {
    case 'ssm': {
      if (!clients.ssm) throw new RunnerMedicError('config', 'no SSM client configured');
      const ssm = new SSMProvider({ awsSdkV3Client: clients.ssm() });
      return (options) => ssm.get(source.name, { ...options, decrypt: true });
    }
    case 'secrets-manager': {
      if (!clients.secretsManager)
        throw new RunnerMedicError('config', 'no Secrets Manager client configured');
      const secrets = new SecretsProvider({ awsSdkV3Client: clients.secretsManager() });
      return (options) => secrets.get(source.id, options);
    }
  }
}

function noValue(source: AwsSecret): RunnerMedicError {
  return new RunnerMedicError(
    'bad-response',
    source.kind === 'ssm'
      ? `SSM parameter ${source.name} has no value`
      : `secret ${source.id} has no string value`,
  );
}

/** A secret value may hold several secrets, one per line, while one is being rotated. */
export function splitSecrets(value: string): string[] {
  return value
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
