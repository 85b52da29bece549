import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { engineFromEnvironment, policyReader } from '../../functions/config/compose-engine.js';
import { ConfigError, loadSettings } from '../../functions/config/settings.js';
import { SimClock } from '../../sim/clock.js';

const base = { TABLE_NAME: 'runner-medic', GITHUB_APP_CREDENTIALS_PARAMETER: '/runner-medic/app' };
const clients = {
  ssm: () => new SSMClient({}),
  secretsManager: () => new SecretsManagerClient({}),
};

describe("loadSettings(env, 'engine')", () => {
  it('reads clusters, the policy source and the GitHub App source', () => {
    const settings = loadSettings(
      {
        ...base,
        POLICY_PARAMETER: '/runner-medic/policy',
        CLUSTERS: JSON.stringify({ 'prod-eu': { kind: 'eks', region: 'eu-west-1' } }),
      },
      'engine',
    );
    expect(settings.policy).toEqual({ kind: 'ssm', name: '/runner-medic/policy' });
    expect(settings.githubApp).toEqual({ kind: 'ssm', name: '/runner-medic/app' });
    expect(settings.clusters).toEqual({ 'prod-eu': { kind: 'eks', region: 'eu-west-1' } });
    expect(settings.githubApiUrl).toBe('https://api.github.com');
  });

  it('reads each cluster’s runner namespaces and the sweep page size', () => {
    const settings = loadSettings(
      {
        ...base,
        CLUSTERS: JSON.stringify({
          'prod-eu': { kind: 'eks', region: 'eu-west-1', namespaces: ['arc-runners', 'arc-gpu'] },
        }),
        SWEEP_PAGE_SIZE: '200',
      },
      'engine',
    );
    expect(settings.clusters['prod-eu']?.namespaces).toEqual(['arc-runners', 'arc-gpu']);
    expect(settings.sweepPageSize).toBe(200);
  });

  it.each([
    [
      { ...base, CLUSTERS: '{"c1": {"kind": "eks", "region": "r", "namespaces": ["Not_A_Name"]}}' },
      /CLUSTERS\.c1\.namespaces/,
    ],
    [{ ...base, CLUSTERS: '{not json' }, /CLUSTERS: not valid JSON/],
    [{ ...base, CLUSTERS: '{"c1": {"kind": "gke"}}' }, /CLUSTERS\.c1\.kind/],
    [{ ...base, POLICY: 'dryRun: true', POLICY_FILE: '/p.yaml' }, /at most one of POLICY/],
    [{ TABLE_NAME: 'runner-medic' }, /exactly one of GITHUB_APP_CREDENTIALS/],
    [{ ...base, GITHUB_API_URL: 'not a url' }, /GITHUB_API_URL/],
    [{ ...base, CHECK_RUNS: 'no' }, /CHECK_RUNS: "on" or "off"/],
  ])('rejects %o naming the bad setting', (env, message) => {
    expect(() => loadSettings(env, 'engine')).toThrow(ConfigError);
    expect(() => loadSettings(env, 'engine')).toThrow(message);
  });

  it('reports every problem at once, whatever group it is in', () => {
    const env = {
      TABLE_NAME: 'x',
      CLUSTERS: '{"c1": {"kind": "gke"}}',
      POLICY: 'dryRun: true',
      POLICY_FILE: '/p.yaml',
      SWEEP_PAGE_SIZE: '3',
    };
    let problems: string[] = [];
    try {
      loadSettings(env, 'engine');
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems.map((p) => p.split(':')[0])).toEqual(
      expect.arrayContaining([
        'TABLE_NAME',
        'GITHUB_APP_CREDENTIALS',
        'POLICY',
        'CLUSTERS.c1.kind',
        'SWEEP_PAGE_SIZE',
      ]),
    );
  });

  it('reads CHECK_RUNS as on or off, on unless set', () => {
    expect(loadSettings(base, 'engine').checkRuns).toBe(true);
    expect(loadSettings({ ...base, CHECK_RUNS: 'on' }, 'engine').checkRuns).toBe(true);
    expect(loadSettings({ ...base, CHECK_RUNS: ' OFF ' }, 'engine').checkRuns).toBe(false);
  });
});

describe('policyReader', () => {
  const clock = new SimClock();

  it('reads an inline document and a file, filling in safe defaults', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-'));
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, 'dryRun: true\nrules:\n  rerunKilledJob:\n    budget: 1\n');

    const fromFile = await policyReader({ kind: 'file', path: file }, clients, clock, 0)();
    const inline = await policyReader(
      { kind: 'inline', text: '{"dryRun": false}' },
      clients,
      clock,
      0,
    )();

    expect(fromFile.dryRun).toBe(true);
    expect(fromFile.rules.rerunKilledJob.budget).toBe(1);
    expect(fromFile.rules.hungJob.enabled).toBe(true);
    expect(inline.dryRun).toBe(false);
    expect(inline.rules.rerunKilledJob.budget).toBe(2);
  });

  it('refuses a bad document with every bad key named', async () => {
    const read = policyReader(
      { kind: 'inline', text: 'dryRun: maybe\nrules:\n  rerunKilledJob:\n    budget: -3\n' },
      clients,
      clock,
      0,
    );
    await expect(read()).rejects.toThrow(ConfigError);
    await expect(read()).rejects.toThrow(/dryRun/);
    await expect(read()).rejects.toThrow(/rules\.rerunKilledJob\.budget/);
  });
});

describe('engineFromEnvironment', () => {
  it('builds the engine once per container and reuses its clients', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const provider = engineFromEnvironment({
      TABLE_NAME: 'runner-medic',
      GITHUB_APP_CREDENTIALS: JSON.stringify({
        appId: 42,
        privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }),
      }),
      POLICY: 'dryRun: true',
      DEFAULT_CLUSTER_NAME: 'prod-eu',
    });

    const first = await provider(() => 1000);
    const second = await provider(() => 2000);

    expect(second.deps.github).toBe(first.deps.github);
    expect(second.deps.store).toBe(first.deps.store);
    expect(first.defaultCluster).toBe('prod-eu');
    expect((await first.deps.policy()).dryRun).toBe(true);
    expect(first.deps.wake).toBeUndefined();
  });
});
