import { ConfigError, loadWebhookSettings } from '../../functions/config/settings.js';

describe('loadWebhookSettings', () => {
  it('applies documented defaults', () => {
    const settings = loadWebhookSettings({
      GITHUB_WEBHOOK_SECRET: 's',
      TABLE_NAME: 'runner-medic',
    });
    expect(settings).toMatchObject({
      secret: { kind: 'env', value: 's' },
      sink: 'eventbridge',
      busName: 'default',
      maxBodyBytes: 1024 * 1024,
      deliveryTtlSeconds: 8 * 24 * 3600,
    });
  });

  it('reads the secret from SSM when a parameter name is given', () => {
    const settings = loadWebhookSettings({
      GITHUB_WEBHOOK_SECRET_PARAMETER: '/runner-medic/webhook-secret',
      TABLE_NAME: 'runner-medic',
    });
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
    expect(() => loadWebhookSettings(env)).toThrow(ConfigError);
    expect(() => loadWebhookSettings(env)).toThrow(message);
  });
});
