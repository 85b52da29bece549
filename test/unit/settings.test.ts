import { readFileSync } from 'node:fs';
import { ConfigError, loadSettings, SETTING_DEFAULTS } from '../../functions/config/settings.js';

describe("loadSettings(env, 'webhook')", () => {
  it('applies documented defaults', () => {
    const settings = loadSettings(
      {
        GITHUB_WEBHOOK_SECRET: 's',
        TABLE_NAME: 'runner-medic',
      },
      'webhook',
    );
    expect(settings).toMatchObject({
      secret: { kind: 'env', value: 's' },
      sink: 'eventbridge',
      busName: 'default',
      maxBodyBytes: 1024 * 1024,
      deliveryTtlSeconds: 8 * 24 * 3600,
    });
  });

  it('reads the secret from SSM when a parameter name is given', () => {
    const settings = loadSettings(
      {
        GITHUB_WEBHOOK_SECRET_PARAMETER: '/runner-medic/webhook-secret',
        TABLE_NAME: 'runner-medic',
      },
      'webhook',
    );
    expect(settings.secret).toEqual({ kind: 'ssm', name: '/runner-medic/webhook-secret' });
  });

  it.each([
    [{ TABLE_NAME: 'runner-medic' }, /exactly one of GITHUB_WEBHOOK_SECRET/],
    [
      {
        GITHUB_WEBHOOK_SECRET: 's',
        GITHUB_WEBHOOK_SECRET_ARN: 'arn:x',
        TABLE_NAME: 'runner-medic',
      },
      /exactly one of/,
    ],
    [{ GITHUB_WEBHOOK_SECRET: 's', TABLE_NAME: 'x' }, /TABLE_NAME/],
    [
      { GITHUB_WEBHOOK_SECRET: 's', TABLE_NAME: 'runner-medic', WEBHOOK_MAX_BODY_BYTES: '7000000' },
      /WEBHOOK_MAX_BODY_BYTES/,
    ],
    [{ GITHUB_WEBHOOK_SECRET: 's', TABLE_NAME: 'runner-medic', EVENT_SINK: 'kafka' }, /EVENT_SINK/],
  ])('rejects %o naming the bad setting', (env, message) => {
    expect(() => loadSettings(env, 'webhook')).toThrow(ConfigError);
    expect(() => loadSettings(env, 'webhook')).toThrow(message);
  });
});

describe("loadSettings(env, 'local')", () => {
  it('runs on loopback with the sandbox on unless told otherwise', () => {
    expect(loadSettings({}, 'local')).toEqual({
      port: 3000,
      host: '127.0.0.1',
      webhookSecret: 'runner-medic-local-secret',
      sandbox: { scenario: 'test/scenarios/seed-karpenter-mid-job.yaml', speed: 60 },
    });
    expect(loadSettings({ SANDBOX: 'off', PORT: '0' }, 'local')).toMatchObject({
      port: 0,
      sandbox: null,
    });
  });

  it('reports every bad variable at once', () => {
    expect(() => loadSettings({ PORT: '70000', SANDBOX: 'maybe' }, 'local')).toThrow(
      /PORT: .*; SANDBOX: /,
    );
  });
});

describe("README.md's Configuration table states the loader's defaults", () => {
  /** Each row of the table: its variables (first column) and its default column. */
  const rows = (() => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? '';
    return section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => {
        const [variables = '', , defaults = ''] = line.split(' | ').map((cell) => cell.trim());
        return { variables: [...variables.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]), defaults };
      });
  })();
  /** The README names npm start's webhook secret by the variable it is read from. */
  const variableOf = (name: string) =>
    name === 'LOCAL_WEBHOOK_SECRET' ? 'GITHUB_WEBHOOK_SECRET' : name;
  const stated = Object.entries(SETTING_DEFAULTS).flatMap(([name, value]) => {
    const row = rows.find((r) => r.variables.includes(variableOf(name)));
    return row ? [[name, value, row.defaults] as const] : [];
  });

  it('has a row for every default', () => {
    expect(stated.map(([name]) => name)).toEqual(Object.keys(SETTING_DEFAULTS));
  });

  it.each(stated)('%s: %s', (_name, value, defaults) => {
    expect(defaults).toContain(`\`${String(value)}\``);
  });
});
