import * as z from 'zod';
import { problemPaths } from '../../domain/model/zod-problems.js';
import { RunnerMedicError } from '../../ports/errors.js';
import type { SecretSource } from '../../ports/secret-source.js';
import { systemClock } from '../../ports/clock.js';
import type { SecretClients } from '../secrets/secret-reader.js';
import { createSecretReader } from '../secrets/secret-reader.js';

export interface GithubAppCredentials {
  appId: number;
  /** PEM, PKCS#1 or PKCS#8. */
  privateKey: string;
}

const PEM = /-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+-----END (?:RSA )?PRIVATE KEY-----/;

const credentialsSchema = z.object({
  appId: z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]),
  privateKey: z
    .string()
    .transform((key) => (key.includes('\n') ? key : key.replaceAll('\\n', '\n')).trim())
    .refine((key) => PEM.test(key), 'not a PEM private key'),
});

/**
 * Reads the App id and private key from one SSM SecureString parameter or Secrets Manager secret
 * holding `{"appId": 123, "privateKey": "-----BEGIN RSA PRIVATE KEY-----\n…"}`. Clients are made
 * by the given factories; nothing is read from the environment here.
 */
export async function loadGithubAppCredentials(
  source: SecretSource,
  clients: SecretClients,
): Promise<GithubAppCredentials> {
  const raw = await createSecretReader(source, clients, systemClock, 0)();
  return parseGithubAppCredentials(raw, describe(source));
}

/** The credentials in a secret's text; errors name the bad keys, never their values. */
function parseGithubAppCredentials(raw: string, where: string): GithubAppCredentials {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    // JSON.parse's message quotes the text: the private key must not reach a log.
    throw new RunnerMedicError('config', `${where} does not hold JSON`);
  }
  const parsed = credentialsSchema.safeParse(json);
  if (!parsed.success) {
    const bad = problemPaths(parsed.error).join(', ');
    throw new RunnerMedicError('config', `${where}: bad GitHub App credentials at ${bad}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function describe(source: SecretSource): string {
  switch (source.kind) {
    case 'env':
      return 'the configured value';
    case 'ssm':
      return `SSM parameter ${source.name}`;
    case 'secrets-manager':
      return `secret ${source.id}`;
  }
}
