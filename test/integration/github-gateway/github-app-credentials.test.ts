import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { loadGithubAppCredentials } from '../../../functions/adapters/github/github-app-credentials.js';
import { OctokitGithubGateway } from '../../../functions/adapters/github/github-gateway.js';
import { REPO, buildWorld } from '../../sim/github/sim-fixture.js';
import { Budget, quietLog } from './gateway-fixture.js';

interface AwsCall {
  target: string;
  body: Record<string, unknown>;
}

/** SSM and Secrets Manager on 127.0.0.1, answering GetParameter / GetSecretValue from a map. */
function fakeAws(values: Map<string, string>) {
  const calls: AwsCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      calls.push({ target, body });
      const key = String(body['Name'] ?? body['SecretId']);
      const value = values.get(key);
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      if (value === undefined) {
        res.writeHead(400);
        res.end(
          JSON.stringify(
            target.startsWith('AmazonSSM')
              ? { __type: 'ParameterNotFound', message: key }
              : { __type: 'ResourceNotFoundException', Message: key },
          ),
        );
        return;
      }
      res.writeHead(200);
      res.end(
        JSON.stringify(
          target === 'AmazonSSM.GetParameter'
            ? { Parameter: { Name: key, Type: 'SecureString', Value: value, Version: 1 } }
            : {
                ARN: `arn:aws:secretsmanager:eu-west-1:1:secret:${key}`,
                Name: key,
                SecretString: value,
              },
        ),
      );
    });
  });
  return {
    calls,
    start: async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('loadGithubAppCredentials reads the App id and key through injected AWS clients', () => {
  const { sim, installationId } = buildWorld({ name: 'ci', jobs: [] });
  const pem = sim.app.privateKey;
  const values = new Map([
    ['/runner-medic/github-app', JSON.stringify({ appId: sim.app.appId, privateKey: pem })],
    [
      'runner-medic/github-app',
      JSON.stringify({ appId: String(sim.app.appId), privateKey: pem.replaceAll('\n', '\\n') }),
    ],
    ['/runner-medic/not-json', 'appId=1'],
    ['/runner-medic/no-key', JSON.stringify({ appId: 0, privateKey: 'hunter2' })],
  ]);
  const aws = fakeAws(values);
  let endpoint = '';
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  const clients = () => ({
    ssm: () => new SSMClient({ endpoint, region: 'eu-west-1', credentials }),
    secretsManager: () => new SecretsManagerClient({ endpoint, region: 'eu-west-1', credentials }),
  });
  beforeAll(async () => {
    endpoint = await aws.start();
    await sim.start();
  });
  afterAll(async () => {
    await aws.stop();
    await sim.stop();
  });

  it('reads a SecureString parameter with decryption, and the credentials authenticate as the App', async () => {
    const app = await loadGithubAppCredentials(
      { kind: 'ssm', name: '/runner-medic/github-app' },
      clients(),
    );
    expect(app).toEqual({ appId: sim.app.appId, privateKey: pem.trim() });
    expect(aws.calls.at(-1)).toEqual({
      target: 'AmazonSSM.GetParameter',
      body: { Name: '/runner-medic/github-app', WithDecryption: true },
    });
    const gateway = new OctokitGithubGateway({
      baseUrl: sim.baseUrl,
      ...app,
      remainingTimeMs: new Budget().remaining,
      log: quietLog,
    });
    expect(await gateway.listRunners({ repo: REPO }, installationId)).toEqual([]);
  });

  it('reads a Secrets Manager secret, accepting a string id and a key with escaped newlines', async () => {
    const app = await loadGithubAppCredentials(
      { kind: 'secrets-manager', id: 'runner-medic/github-app' },
      clients(),
    );
    expect(app).toEqual({ appId: sim.app.appId, privateKey: pem.trim() });
    expect(aws.calls.at(-1)).toEqual({
      target: 'secretsmanager.GetSecretValue',
      body: { SecretId: 'runner-medic/github-app' },
    });
  });

  it('names the bad fields without echoing the secret, and fails on a missing parameter or client', async () => {
    const notJson = await rejection(
      loadGithubAppCredentials({ kind: 'ssm', name: '/runner-medic/not-json' }, clients()),
    );
    expect(String(notJson)).toContain('SSM parameter /runner-medic/not-json does not hold JSON');
    expect(notJson).toMatchObject({ kind: 'config' });
    // JSON.parse's own message quotes the text, so it is not kept as the cause.
    expect(String((notJson as Error).cause)).not.toContain('appId=1');
    const bad = await rejection(
      loadGithubAppCredentials({ kind: 'ssm', name: '/runner-medic/no-key' }, clients()),
    );
    expect(String(bad)).toContain('bad GitHub App credentials at appId, privateKey');
    expect(String(bad)).not.toContain('hunter2');
    expect(String((bad as Error).cause)).not.toContain('hunter2');
    const missing = await rejection(
      loadGithubAppCredentials({ kind: 'ssm', name: '/nope' }, clients()),
    );
    expect(missing).toMatchObject({ name: 'ParameterNotFound' });
    const noClient = await rejection(
      loadGithubAppCredentials({ kind: 'secrets-manager', id: 'x' }, { ssm: clients().ssm }),
    );
    expect(String(noClient)).toContain('no Secrets Manager client configured');
  });
});
