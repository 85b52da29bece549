/** Where a secret is read from: the environment itself, an SSM SecureString or a Secrets Manager secret. */
export type SecretSource =
  | { kind: 'env'; value: string }
  | { kind: 'ssm'; name: string }
  | { kind: 'secrets-manager'; id: string };
