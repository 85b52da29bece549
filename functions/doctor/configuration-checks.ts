import { policyReader } from '../config/compose-engine.js';
import type { EngineSettings } from '../config/settings.js';
import { ConfigError, loadSettings, secretSourceOf } from '../config/settings.js';
import type { GithubAppCredentials } from '../adapters/github/github-app-credentials.js';
import { loadGithubAppCredentials } from '../adapters/github/github-app-credentials.js';
import type { SecretClients } from '../adapters/secrets/secret-reader.js';
import { createSecretReader } from '../adapters/secrets/secret-reader.js';
import type { Policy } from '../domain/policy/policy.js';
import type { Clock } from '../ports/clock.js';
import type { CheckResult } from './doctor-check.js';
import { describeError, finding, listed, ok, unreachable } from './doctor-check.js';

/** What the later checks need from the configuration, when it is there and parses. */
export interface DoctorConfiguration {
  settings: EngineSettings | undefined;
  app: GithubAppCredentials | undefined;
  policy: Policy | undefined;
}

/** AWS answers for a parameter or secret that does not exist: a finding, not a connection problem. */
const MISSING = new Set([
  'ParameterNotFound',
  'ResourceNotFoundException',
  'ParameterVersionNotFound',
]);

function isMissing(error: unknown): boolean {
  return error instanceof Error && MISSING.has(error.name);
}

/**
 * The configuration checks: the settings the functions read (functions/config), each secret
 * and the policy read from where the settings say, and the policy's dry run.
 */
export async function checkConfiguration(
  env: Record<string, string | undefined>,
  clients: Required<SecretClients>,
  clock: Clock,
): Promise<{ checks: CheckResult[]; configuration: DoctorConfiguration }> {
  const checks: CheckResult[] = [];
  const configuration: DoctorConfiguration = {
    settings: undefined,
    app: undefined,
    policy: undefined,
  };

  let settingsProblems: string[] = [];
  try {
    configuration.settings = loadSettings(env, 'engine');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    settingsProblems = error.problems;
  }
  const clusterProblems = settingsProblems.filter((p) => p.startsWith('CLUSTERS'));
  const otherProblems = settingsProblems.filter(
    (p) => !p.startsWith('CLUSTERS') && !p.includes('GITHUB_APP_CREDENTIALS'),
  );

  checks.push(
    otherProblems.length > 0
      ? finding(
          'configuration.settings',
          `The functions would refuse to start: ${otherProblems.join('; ')}.`,
          'Fix these environment variables (README, Configuration) or the stage parameters.',
        )
      : ok('configuration.settings', 'The environment parses as the functions read it.'),
  );

  checks.push(await checkWebhookSecret(env, clients, clock));
  checks.push(await checkAppCredentials(env, clients, configuration));

  if (clusterProblems.length > 0) {
    checks.push(
      finding(
        'configuration.clusters',
        `CLUSTERS does not parse: ${clusterProblems.join('; ')}. The engine acts on no cluster.`,
        'Give CLUSTERS as JSON: {"<clusterName>": {"kind": "eks", "region": "eu-west-1", "namespaces": ["arc-runners"]}}.',
      ),
    );
  } else if (configuration.settings) {
    const names = Object.keys(configuration.settings.clusters);
    checks.push(
      names.length === 0
        ? finding(
            'configuration.clusters',
            'CLUSTERS names no cluster: every event is rejected as coming from an unknown cluster, and the sweep has nothing to look at.',
            'Add each cluster whose exporter sends events, under the clusterName the exporter uses.',
          )
        : ok('configuration.clusters', `CLUSTERS names ${names.length}: ${listed(names)}.`),
    );
  }

  if (configuration.settings) {
    checks.push(await checkPolicy(configuration.settings, clients, clock, configuration));
  }
  return { checks, configuration };
}

async function checkWebhookSecret(
  env: Record<string, string | undefined>,
  clients: SecretClients,
  clock: Clock,
): Promise<CheckResult> {
  const id = 'configuration.webhook-secret';
  const source = secretSourceOf(env, 'GITHUB_WEBHOOK_SECRET');
  if (typeof source === 'string') {
    return finding(
      id,
      `The webhook secret is not configured (${source}): the webhook function refuses every delivery.`,
      'Set GITHUB_WEBHOOK_SECRET_PARAMETER to the SSM SecureString that holds the secret the App signs with.',
    );
  }
  try {
    const value = await createSecretReader(source, clients, clock, 0)();
    return value.trim() === ''
      ? finding(id, 'The webhook secret is empty.', 'Store the App’s webhook secret in it.')
      : ok(id, `The webhook secret is readable (${source.kind}).`);
  } catch (error) {
    return isMissing(error)
      ? finding(
          id,
          `The webhook secret does not exist: ${describeError(error)}.`,
          'Create it (docs/deploy.md, step 2) with the secret set on the GitHub App.',
        )
      : unreachable(
          id,
          `Cannot read the webhook secret: ${describeError(error)}.`,
          'Check the AWS credentials and region the doctor runs with.',
        );
  }
}

async function checkAppCredentials(
  env: Record<string, string | undefined>,
  clients: SecretClients,
  configuration: DoctorConfiguration,
): Promise<CheckResult> {
  const id = 'configuration.github-app';
  const source = secretSourceOf(env, 'GITHUB_APP_CREDENTIALS');
  if (typeof source === 'string') {
    return finding(
      id,
      `The GitHub App credentials are not configured (${source}): the engine cannot call GitHub.`,
      'Set GITHUB_APP_CREDENTIALS_PARAMETER to an SSM SecureString holding {"appId": …, "privateKey": "-----BEGIN RSA PRIVATE KEY-----…"}.',
    );
  }
  try {
    configuration.app = await loadGithubAppCredentials(source, clients);
    return ok(id, `The App credentials parse: App id ${configuration.app.appId}.`);
  } catch (error) {
    if (isMissing(error)) {
      return finding(
        id,
        `The App credentials do not exist: ${describeError(error)}.`,
        'Create the parameter (docs/deploy.md, step 2).',
      );
    }
    const badDocument =
      error instanceof Error && /does not hold JSON|bad GitHub App credentials/.test(error.message);
    return badDocument
      ? finding(
          id,
          `The App credentials do not parse: ${error instanceof Error ? error.message : String(error)}.`,
          'Store {"appId": <number>, "privateKey": "<the App’s PEM private key>"}.',
        )
      : unreachable(
          id,
          `Cannot read the App credentials: ${describeError(error)}.`,
          'Check the AWS credentials and region the doctor runs with.',
        );
  }
}

async function checkPolicy(
  settings: EngineSettings,
  clients: Required<SecretClients>,
  clock: Clock,
  configuration: DoctorConfiguration,
): Promise<CheckResult> {
  const id = 'configuration.policy';
  let policy: Policy;
  try {
    policy = await policyReader(settings.policy, clients, clock, 0)();
  } catch (error) {
    if (error instanceof ConfigError) {
      return finding(
        id,
        `The policy does not parse: ${error.problems.join('; ')}. The engine refuses to decide.`,
        'Fix the policy document (README, Policy).',
      );
    }
    return isMissing(error) || settings.policy.kind === 'file'
      ? finding(
          id,
          `The policy cannot be read: ${describeError(error)}.`,
          'Create it, or leave POLICY, POLICY_FILE and POLICY_PARAMETER unset for the default policy.',
        )
      : unreachable(
          id,
          `Cannot read the policy: ${describeError(error)}.`,
          'Check the AWS credentials and region the doctor runs with.',
        );
  }
  configuration.policy = policy;
  const rulesInDryRun = Object.entries(policy.rules)
    .filter(([, rule]) => rule.enabled && rule.dryRun)
    .map(([name]) => name);
  if (policy.dryRun) {
    return finding(
      id,
      'The policy is in dry run: every rule decides and reports what it would do, and nothing is changed.',
      'Once the audit trail shows the would-be actions you expect, set dryRun: false (docs/deploy.md).',
    );
  }
  if (rulesInDryRun.length > 0) {
    return finding(
      id,
      `These rules are in dry run and change nothing: ${listed(rulesInDryRun)}.`,
      'Set dryRun: false on each once its would-be actions look right.',
    );
  }
  return ok(id, `The policy parses (${settings.policy.kind}); it acts (not in dry run).`);
}
