import { rootCertificates } from 'node:tls';
import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import {
  ClusterConnections,
  UnknownClusterError,
} from '../../../functions/adapters/kubernetes/cluster-connections.js';
import { ClusterRequestError } from '../../../functions/adapters/kubernetes/kube-errors.js';
import { ClusterUnavailableError } from '../../../functions/ports/cluster-gateway.js';
import type { SimClock } from '../../../sim/clock.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { AwsLoopback, TEST_CREDENTIALS, type AwsCall } from './aws-loopback.js';
import { kubeconfigYaml, LOOPBACK_CA_PEM, LoopbackProxy, status } from './loopback-proxy.js';
import { NS, seedEphemeralRunner, startSim } from './sim-fixture.js';
import { decodeEksToken, expectedSignature } from './sigv4-check.js';

const names = async (c: ClusterConnections, cluster: string) =>
  (await (await c.forCluster(cluster)).listRunners(NS)).ephemeralRunners.map(
    (e) => e.metadata.name,
  );

describe('ClusterConnections: several clusters, each with its own server and credentials', () => {
  let a: { server: ApiServer; clock: SimClock };
  let b: { server: ApiServer; clock: SimClock };
  let clock: SimClock;

  beforeAll(async () => {
    a = await startSim({ clusterName: 'a', seed: 21 });
    b = await startSim({ clusterName: 'b', seed: 22 });
    clock = a.clock;
    seedEphemeralRunner(a.server, 'runner-on-a');
    seedEphemeralRunner(b.server, 'runner-on-b');
  });

  afterAll(async () => {
    await a.server.stop();
    await b.server.stop();
  });

  it('reaches each cluster by its name with its own kubeconfig, and refuses unknown names', async () => {
    a.server.addActor('medic-a');
    b.server.addActor('medic-b');
    const c = new ClusterConnections({
      clock,
      clusters: {
        'cluster-a': { kind: 'kubeconfig', kubeconfig: a.server.kubeconfig('medic-a') },
        'cluster-b': { kind: 'kubeconfig', kubeconfig: b.server.kubeconfig('medic-b') },
      },
    });
    expect(c.clusters()).toEqual(['cluster-a', 'cluster-b']);
    expect(await names(c, 'cluster-a')).toEqual(['runner-on-a']);
    expect(await names(c, 'cluster-b')).toEqual(['runner-on-b']);
    const gw = await c.forCluster('cluster-a');
    expect(gw.cluster).toBe('cluster-a');
    expect(await c.forCluster('cluster-a')).toBe(gw);
    expect((await gw.listRunners(NS)).ephemeralRunners[0]?.cluster).toBe('cluster-a');

    expect(a.server.audit.requests.filter((r) => r.by === 'medic-a').length).toBeGreaterThan(0);
    expect(a.server.audit.requests.filter((r) => r.by === 'medic-b')).toEqual([]);
    expect(b.server.audit.requests.filter((r) => r.by === 'medic-a')).toEqual([]);
    await expect(c.forCluster('cluster-c')).rejects.toBeInstanceOf(UnknownClusterError);
  });

  it('reads kubeconfigs from SSM and Secrets Manager, cached, and follows a rotation', async () => {
    a.server.addActor('rotated');
    let ssmDocument = a.server.kubeconfig('runner-medic');
    const aws = new AwsLoopback((call: AwsCall) => {
      if (call.target === 'AmazonSSM.GetParameter') {
        return {
          status: 200,
          contentType: 'application/x-amz-json-1.1',
          body: { Parameter: { Name: '/rm/kube/a', Type: 'SecureString', Value: ssmDocument } },
        };
      }
      if (call.target === 'secretsmanager.GetSecretValue') {
        return {
          status: 200,
          contentType: 'application/x-amz-json-1.1',
          body: {
            ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:kb',
            Name: 'kb',
            SecretString: b.server.kubeconfig(),
          },
        };
      }
      return { status: 400, body: { __type: 'UnknownOperationException' } };
    });
    await aws.start();
    try {
      const sdk = {
        region: 'eu-west-1',
        endpoint: aws.url,
        credentials: TEST_CREDENTIALS,
        maxAttempts: 1,
      };
      const c = new ClusterConnections({
        clock,
        secretCacheSeconds: 300,
        secretClients: {
          ssm: () => new SSMClient(sdk),
          secretsManager: () => new SecretsManagerClient(sdk),
        },
        clusters: {
          a: { kind: 'kubeconfig-secret', secret: { kind: 'ssm', name: '/rm/kube/a' } },
          b: { kind: 'kubeconfig-secret', secret: { kind: 'secrets-manager', id: 'kb' } },
        },
      });
      expect(await names(c, 'a')).toEqual(['runner-on-a']);
      expect(await names(c, 'b')).toEqual(['runner-on-b']);
      expect(aws.calls.map((x) => x.target)).toEqual([
        'AmazonSSM.GetParameter',
        'secretsmanager.GetSecretValue',
      ]);
      expect(aws.calls[0]?.body).toEqual({ Name: '/rm/kube/a', WithDecryption: true });

      const first = await c.forCluster('a');
      await clock.advance(299_000);
      expect(await c.forCluster('a')).toBe(first);
      expect(aws.calls).toHaveLength(2);

      ssmDocument = a.server.kubeconfig('rotated');
      await clock.advance(2_000);
      const second = await c.forCluster('a');
      expect(second).not.toBe(first);
      expect(aws.calls).toHaveLength(3);
      const before = a.server.audit.requests.filter((r) => r.by === 'rotated').length;
      await second.listNodes();
      expect(a.server.audit.requests.filter((r) => r.by === 'rotated').length).toBe(before + 1);
    } finally {
      await aws.stop();
    }
  });

  it('fails with ClusterUnavailableError when the kubeconfig cannot be read, and recovers', async () => {
    let broken = true;
    const aws = new AwsLoopback(() =>
      broken
        ? {
            status: 400,
            contentType: 'application/x-amz-json-1.1',
            body: { __type: 'ParameterNotFound', message: 'nope' },
          }
        : {
            status: 200,
            contentType: 'application/x-amz-json-1.1',
            body: { Parameter: { Value: a.server.kubeconfig() } },
          },
    );
    await aws.start();
    try {
      const c = new ClusterConnections({
        clock,
        secretClients: {
          ssm: () =>
            new SSMClient({
              region: 'eu-west-1',
              endpoint: aws.url,
              credentials: TEST_CREDENTIALS,
              maxAttempts: 1,
            }),
        },
        clusters: { a: { kind: 'kubeconfig-secret', secret: { kind: 'ssm', name: '/missing' } } },
      });
      const err = await c.forCluster('a').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnavailableError);
      expect(((err as Error).cause as Error).name).toBe('ParameterNotFound');
      broken = false;
      expect(await names(c, 'a')).toEqual(['runner-on-a']);
    } finally {
      await aws.stop();
    }
  });
});

describe('ClusterConnections with EKS IAM auth', () => {
  let sim: { server: ApiServer; clock: SimClock };
  let proxy: LoopbackProxy;
  let eks: AwsLoopback;
  /** Tokens the authenticator in front of the API server accepted, in order. */
  const accepted: URL[] = [];
  let revoked = false;
  let credentialCalls = 0;

  beforeAll(async () => {
    sim = await startSim({ clusterName: 'prod-eks', seed: 31 });
    seedEphemeralRunner(sim.server, 'eks-runner');
    proxy = new LoopbackProxy(sim.server.httpUrl);
    await proxy.start();
    // What EKS does with the bearer: check the presigned STS call (signature over
    // x-k8s-aws-id, 15 minutes from X-Amz-Date) before it maps the caller to a Kubernetes user.
    proxy.authorize = (authorization) => {
      const denied = status(401, 'Unauthorized', 'Unauthorized');
      let url: URL;
      try {
        url = decodeEksToken((authorization ?? '').replace(/^Bearer /, ''));
      } catch {
        return denied;
      }
      const q = url.searchParams;
      const good = expectedSignature(
        url,
        { host: url.host, 'x-k8s-aws-id': 'prod-eks' },
        TEST_CREDENTIALS.secretAccessKey,
      );
      const at = Date.parse(
        (q.get('X-Amz-Date') ?? '').replace(
          /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/,
          '$1-$2-$3T$4:$5:$6Z',
        ),
      );
      if (revoked || q.get('X-Amz-Signature') !== good || !(sim.clock.now() <= at + 15 * 60_000))
        return denied;
      accepted.push(url);
      return `Bearer ${sim.server.token('runner-medic')}`;
    };
    eks = new AwsLoopback((call) => {
      if (call.method === 'GET' && call.path === '/clusters/prod-eks') {
        return {
          status: 200,
          body: {
            cluster: {
              name: 'prod-eks',
              status: 'ACTIVE',
              endpoint: proxy.url,
              certificateAuthority: { data: Buffer.from(LOOPBACK_CA_PEM).toString('base64') },
            },
          },
        };
      }
      if (call.method === 'GET' && call.path === '/clusters/wrong-ca') {
        const ca = Buffer.from(rootCertificates[0] ?? '').toString('base64');
        return {
          status: 200,
          body: {
            cluster: { name: 'wrong-ca', endpoint: proxy.url, certificateAuthority: { data: ca } },
          },
        };
      }
      return {
        status: 404,
        body: { message: 'No cluster found' },
        contentType: 'application/json',
      };
    });
    await eks.start();
  });

  afterAll(async () => {
    await proxy.stop();
    await eks.stop();
    await sim.server.stop();
  });

  const connections = () =>
    new ClusterConnections({
      clock: sim.clock,
      eks: {
        client: (region) =>
          new EKSClient({
            region,
            endpoint: eks.url,
            credentials: TEST_CREDENTIALS,
            maxAttempts: 1,
          }),
        credentials: () => {
          credentialCalls++;
          return Promise.resolve({
            ...TEST_CREDENTIALS,
            sessionToken: `session-${credentialCalls}`,
          });
        },
      },
      clusters: {
        prod: { kind: 'eks', region: 'eu-west-1', eksClusterName: 'prod-eks' },
        local: {
          kind: 'kubeconfig',
          kubeconfig: kubeconfigYaml(sim.server.url, sim.server.token('runner-medic')),
        },
        missing: { kind: 'eks', region: 'eu-west-1', eksClusterName: 'no-such' },
        impostor: { kind: 'eks', region: 'eu-west-1', eksClusterName: 'wrong-ca' },
      },
    });

  it('connects with DescribeCluster and a presigned token, reused until 14 minutes, then renewed', async () => {
    const c = connections();
    const gw = await c.forCluster('prod');
    expect((await gw.listRunners(NS)).ephemeralRunners.map((e) => e.metadata.name)).toEqual([
      'eks-runner',
    ]);
    expect(eks.calls.map((x) => `${x.method} ${x.path}`)).toEqual(['GET /clusters/prod-eks']);
    expect(accepted).toHaveLength(2); // the ER list and the pod list
    const firstDate = accepted[0]?.searchParams.get('X-Amz-Date');
    expect(accepted[0]?.host).toBe('sts.eu-west-1.amazonaws.com');

    await sim.clock.advance(13 * 60_000);
    expect(await c.forCluster('prod')).toBe(gw);
    await gw.listNodes();
    expect(accepted[2]?.searchParams.get('X-Amz-Date')).toBe(firstDate);

    await sim.clock.advance(60_000);
    const renewed = await c.forCluster('prod');
    expect(renewed).not.toBe(gw);
    await renewed.listNodes();
    const last = accepted[accepted.length - 1];
    expect(last?.searchParams.get('X-Amz-Date')).not.toBe(firstDate);
    expect(last?.searchParams.get('X-Amz-Security-Token')).toBe('session-2');
    expect(eks.calls).toHaveLength(1); // endpoint and CA stay cached

    // A gateway held past the token's life is refused; the next forCluster has a fresh one.
    await sim.clock.advance(15 * 60_000 + 1);
    expect(((await gw.listNodes().catch((e: unknown) => e)) as ClusterRequestError).code).toBe(401);
    await (await c.forCluster('prod')).listNodes();
    expect(accepted[accepted.length - 1]?.searchParams.get('X-Amz-Security-Token')).toBe(
      'session-3',
    );
  });

  it('drops the cached token after a 401 even before it expires', async () => {
    const c = connections();
    const gw = await c.forCluster('prod');
    await gw.listNodes();
    const calls = credentialCalls;
    const described = eks.calls.length;
    revoked = true;
    await expect(gw.listNodes()).rejects.toBeInstanceOf(ClusterRequestError);
    revoked = false;
    const again = await c.forCluster('prod');
    expect(again).not.toBe(gw);
    await again.listNodes();
    expect(credentialCalls).toBe(calls + 1);
    expect(eks.calls.length).toBe(described); // the endpoint and CA are still good

    // A late 401 from the old gateway does not throw away the new one.
    revoked = true;
    await gw.listNodes().catch(() => undefined);
    revoked = false;
    expect(await c.forCluster('prod')).toBe(again);
  });

  it('describes the cluster again once the endpoint cache (1 h) runs out', async () => {
    const c = connections();
    await c.forCluster('prod');
    const described = eks.calls.length;
    await sim.clock.advance(59 * 60_000);
    await c.forCluster('prod');
    expect(eks.calls.length).toBe(described);
    await sim.clock.advance(60_000);
    await (await c.forCluster('prod')).listNodes();
    expect(eks.calls.length).toBe(described + 1);
  });

  it('serves an EKS cluster beside a kubeconfig cluster, and reports a cluster EKS does not know', async () => {
    const c = connections();
    expect(c.clusters()).toEqual(['prod', 'local', 'missing', 'impostor']);
    const local = await c.forCluster('local');
    expect(local.cluster).toBe('local');
    expect((await local.getEphemeralRunner(NS, 'eks-runner'))?.cluster).toBe('local');
    const err = await c.forCluster('missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnavailableError);
    expect((err as Error).message).toBe('cannot connect to cluster missing');
    const before = eks.calls.length;
    await c.forCluster('missing').catch(() => undefined);
    expect(eks.calls.length).toBe(before + 1); // a failed DescribeCluster is not cached
  });

  it('trusts only the CA DescribeCluster gave: another certificate gets no token', async () => {
    const c = connections();
    const gw = await c.forCluster('impostor');
    const seen = proxy.seen.length;
    const err = await gw.listNodes().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnavailableError);
    expect((err as Error).message).toMatch(/certificate/i);
    expect(proxy.seen.length).toBe(seen); // the TLS handshake failed before any request
  });

  it('refuses EKS access when no EKS client is configured', async () => {
    const c = new ClusterConnections({
      clock: sim.clock,
      clusters: { prod: { kind: 'eks', region: 'eu-west-1' } },
    });
    const err = await c.forCluster('prod').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnavailableError);
    expect(((err as Error).cause as Error).message).toMatch(/no EKS client/);
  });
});
