import { SSMClient } from '@aws-sdk/client-ssm';
import { parse, stringify } from 'yaml';
import { kubeconfigSource } from '../../../functions/adapters/kubernetes/cluster-connection.js';
import { ClusterConnections } from '../../../functions/adapters/kubernetes/cluster-connections.js';
import { kubeConfigFromString } from '../../../functions/adapters/kubernetes/kubeconfig-source.js';
import { ClusterUnavailableError } from '../../../functions/ports/cluster-gateway.js';
import { SimClock } from '../../../sim/clock.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { AwsLoopback, TEST_CREDENTIALS } from './aws-loopback.js';
import { NS, seedEphemeralRunner, startSim } from './sim-fixture.js';

interface Doc {
  clusters: unknown[];
  users: unknown[];
  contexts: { name: string }[];
  'current-context': string;
}

const execUser = {
  name: 'eks-cli',
  user: {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: 'aws',
      args: ['eks', 'get-token'],
    },
  },
};

describe('kubeconfig documents', () => {
  let a: { server: ApiServer; clock: SimClock };
  let b: { server: ApiServer; clock: SimClock };
  let both: Doc;

  beforeAll(async () => {
    a = await startSim({ clusterName: 'alpha', seed: 41 });
    b = await startSim({ clusterName: 'beta', seed: 42 });
    seedEphemeralRunner(b.server, 'only-on-beta');
    const da = parse(a.server.kubeconfig()) as Doc;
    b.server.addActor('medic-b'); // kubeconfig user names must be unique
    const db = parse(b.server.kubeconfig('medic-b')) as Doc;
    both = {
      clusters: [...da.clusters, ...db.clusters],
      users: [...da.users, ...db.users],
      contexts: [...da.contexts, ...db.contexts],
      'current-context': da['current-context'],
    };
  });

  afterAll(async () => {
    await a.server.stop();
    await b.server.stop();
  });

  it('uses the named context, or the current one', () => {
    const doc = stringify(both);
    expect(kubeConfigFromString(doc).getCurrentCluster()?.server).toBe(a.server.url);
    const beta = both.contexts[1]?.name ?? '';
    expect(kubeConfigFromString(doc, { context: beta }).getCurrentCluster()?.server).toBe(
      b.server.url,
    );
    expect(
      kubeConfigFromString(JSON.stringify(both), { context: beta }).getCurrentCluster()?.name,
    ).toBe('beta');
    expect(() => kubeConfigFromString(doc, { context: 'nope' })).toThrow(/no context "nope"/);
  });

  it('refuses exec plugins unless allowed (Lambda has no aws CLI)', () => {
    const doc = stringify({
      ...both,
      users: [execUser],
      contexts: [{ name: 'x', context: { cluster: 'alpha', user: 'eks-cli' } }],
      'current-context': 'x',
    });
    expect(() => kubeConfigFromString(doc)).toThrow(
      /eks-cli needs an exec or auth-provider plugin/,
    );
    expect(kubeConfigFromString(doc, { allowExec: true }).getCurrentUser()?.name).toBe('eks-cli');
  });

  it('reaches the context chosen for a cluster through ClusterConnections', async () => {
    const beta = both.contexts[1]?.name ?? '';
    const c = new ClusterConnections({
      clock: a.clock,
      clusters: {
        beta: { kind: 'kubeconfig', kubeconfig: stringify(both), context: beta },
        bad: { kind: 'kubeconfig', kubeconfig: stringify(both), context: 'missing' },
      },
    });
    const listing = await (await c.forCluster('beta')).listRunners(NS);
    expect(listing.ephemeralRunners.map((e) => e.metadata.name)).toEqual(['only-on-beta']);
    const err = await c.forCluster('bad').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnavailableError);
    expect(((err as Error).cause as Error).message).toMatch(/no context "missing"/);
  });
});

describe('a kubeconfig read from SSM (Powertools parameters over the SDK client)', () => {
  let value = 'apiVersion: v1';
  let status = 200;
  const aws = new AwsLoopback(() =>
    status === 200
      ? {
          status,
          contentType: 'application/x-amz-json-1.1',
          body: { Parameter: { Name: '/rm/kube', Type: 'SecureString', Value: value } },
        }
      : {
          status,
          contentType: 'application/x-amz-json-1.1',
          body: { __type: 'InternalServerError', message: 'try again' },
        },
  );
  const clock = new SimClock(Date.parse('2026-03-02T09:00:00Z'));
  const ssm = () =>
    new SSMClient({
      region: 'eu-west-1',
      endpoint: aws.url,
      credentials: TEST_CREDENTIALS,
      maxAttempts: 1,
    });
  beforeAll(() => aws.start());
  afterAll(() => aws.stop());
  beforeEach(() => {
    aws.calls.length = 0;
    value = 'apiVersion: v1';
    status = 200;
  });

  it('shares one call among overlapping reads, and keeps no failure', async () => {
    const read = kubeconfigSource({ kind: 'ssm', name: '/rm/kube' }, { ssm }, clock, 300);
    expect(await Promise.all([read(), read(), read()])).toEqual(Array(3).fill('apiVersion: v1'));
    expect(aws.calls).toHaveLength(1);

    const failing = kubeconfigSource({ kind: 'ssm', name: '/rm/kube' }, { ssm }, clock, 300);
    status = 500;
    await expect(failing()).rejects.toMatchObject({ name: 'InternalServerError' });
    status = 200;
    expect(await failing()).toBe('apiVersion: v1');
    expect(aws.calls).toHaveLength(3);
  });

  it('reads every time without a cache duration, and refuses an empty value', async () => {
    const read = kubeconfigSource({ kind: 'ssm', name: '/rm/kube' }, { ssm }, clock, 0);
    await read();
    value = 'apiVersion: v2';
    expect(await read()).toBe('apiVersion: v2');
    expect(aws.calls).toHaveLength(2);
    value = '';
    await expect(read()).rejects.toMatchObject({
      kind: 'bad-response',
      message: 'SSM parameter /rm/kube has no value',
    });
  });
});
