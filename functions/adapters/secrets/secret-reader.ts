import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { SecretSource } from '../../ports/secret-source.js';
import type { Clock } from '../../ports/clock.js';

export interface SecretClients {
  ssm?: () => SSMClient;
  secretsManager?: () => SecretsManagerClient;
}

/**
 * Reads a secret value from the environment, SSM Parameter Store (SecureString) or Secrets
 * Manager, and caches it per container for `cacheSeconds` so a rotation is picked up.
 */
export function createSecretReader(
  source: SecretSource,
  clients: SecretClients,
  clock: Clock,
  cacheSeconds: number,
): () => Promise<string> {
  let cached: { value: Promise<string>; until: number } | undefined;
  return () => {
    const now = clock.now();
    if (!cached || now >= cached.until) {
      const value = fetchSecret(source, clients);
      cached = { value, until: now + cacheSeconds * 1000 };
      value.catch(() => {
        cached = undefined;
      });
    }
    return cached.value;
  };
}

async function fetchSecret(source: SecretSource, clients: SecretClients): Promise<string> {
  switch (source.kind) {
    case 'env':
      return source.value;
    case 'ssm': {
      if (!clients.ssm) throw new Error('no SSM client configured');
      const result = await clients
        .ssm()
        .send(new GetParameterCommand({ Name: source.name, WithDecryption: true }));
      const value = result.Parameter?.Value;
      if (!value) throw new Error(`SSM parameter ${source.name} has no value`);
      return value;
    }
    case 'secrets-manager': {
      if (!clients.secretsManager) throw new Error('no Secrets Manager client configured');
      const result = await clients
        .secretsManager()
        .send(new GetSecretValueCommand({ SecretId: source.id }));
      if (!result.SecretString) throw new Error(`secret ${source.id} has no string value`);
      return result.SecretString;
    }
  }
}

/** A secret value may hold several secrets, one per line, while one is being rotated. */
export function splitSecrets(value: string): string[] {
  return value
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
