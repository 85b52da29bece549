import { KubeConfig } from '@kubernetes/client-node';
import { KubeClusterGateway } from '../../../functions/adapters/kubernetes/kube-cluster-gateway.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import type { SimClock } from '../../../sim/clock.js';
import { kubeconfigYaml, LoopbackProxy, status } from './loopback-proxy.js';
import { kubeConfigFor, NS, seedEphemeralRunner, seedRunnerPod, startSim } from './sim-fixture.js';

describe('KubeClusterGateway reads, against the Kubernetes API twin', () => {
  let server: ApiServer;
  let clock: SimClock;
  let proxy: LoopbackProxy;

  beforeAll(async () => {
    ({ server, clock } = await startSim());
    proxy = new LoopbackProxy(server.httpUrl);
    await proxy.start();
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  beforeEach(() => {
    proxy.intercept = undefined;
    proxy.seen.length = 0;
  });

  const gatewayVia = (url: string, extra: { pageSize?: number } = {}) => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(url, server.token('runner-medic')));
    return new KubeClusterGateway({
      cluster: 'prod',
      kubeConfig: kc,
      pageSize: extra.pageSize ?? 3,
    });
  };

  it('lists every ER and only ARC runner pods of the namespace, page by page', async () => {
    for (let i = 0; i < 7; i++) {
      const er = seedEphemeralRunner(server, `set-runner-${i}`);
      seedRunnerPod(server, `set-runner-${i}`, { owner: er });
    }
    seedRunnerPod(server, 'not-a-runner', { labels: { app: 'web' } });
    seedRunnerPod(server, 'listener-ish', { labels: { 'app.kubernetes.io/component': 'runner' } });
    seedEphemeralRunner(server, 'elsewhere', { namespace: 'other' });

    const gw = new KubeClusterGateway({
      cluster: 'prod',
      kubeConfig: kubeConfigFor(server),
      pageSize: 3,
    });
    const listing = await gw.listRunners(NS);

    const names = Array.from({ length: 7 }, (_, i) => `set-runner-${i}`);
    expect(listing.ephemeralRunners.map((e) => e.metadata.name)).toEqual(names);
    expect(listing.pods.map((p) => p.metadata.name)).toEqual(names);
    expect(listing.pods.every((p) => p.cluster === 'prod' && p.metadata.namespace === NS)).toBe(
      true,
    );
    const er = listing.ephemeralRunners[0];
    expect(er?.metadata.uid).toBe(
      server.api.get('ephemeralrunners', NS, 'set-runner-0').metadata.uid,
    );
    // Pods come back as client-node model objects (Date timestamps); the parser reads them.
    expect(listing.pods[0]?.metadata.creationTimestamp).toBe(Math.floor(clock.now() / 1000) * 1000);
    expect(listing.pods[0]?.metadata.ownerReferences[0]).toMatchObject({
      kind: 'EphemeralRunner',
      controller: true,
    });

    const lists = server.audit.requests.filter((r) => r.by === 'runner-medic' && r.verb === 'list');
    const erPages = lists.filter((r) => r.path.includes('/ephemeralrunners'));
    const podPages = lists.filter((r) => r.path.includes('/pods'));
    expect(erPages).toHaveLength(3);
    expect(podPages).toHaveLength(3);
    expect(erPages.every((r) => r.path.includes('limit=3'))).toBe(true);
    expect(erPages.filter((r) => r.path.includes('continue=')).length).toBe(2);
    expect(
      podPages.every((r) =>
        decodeURIComponent(r.path).includes(
          'labelSelector=actions-ephemeral-runner=True,app.kubernetes.io/component=runner',
        ),
      ),
    ).toBe(true);
  });

  it('reads old (bool) and new (time) failures shapes and the job fields', async () => {
    const old = await startSim({ flavour: '0.9', seed: 3 });
    try {
      seedEphemeralRunner(old.server, 'old-runner', {
        status: {
          phase: 'Failed',
          reason: 'TooManyPodFailures',
          runnerId: 12,
          runnerName: 'old-runner',
          failures: { 'pod-a': true, 'pod-b': true },
          runnerJITConfig: 'jit',
        },
      });
      const oldGw = new KubeClusterGateway({
        cluster: 'legacy',
        kubeConfig: kubeConfigFor(old.server),
      });
      const [oldEr] = (await oldGw.listRunners(NS)).ephemeralRunners;
      expect(oldEr).toMatchObject({
        cluster: 'legacy',
        phase: 'Failed',
        reason: 'TooManyPodFailures',
        runnerId: 12,
        failuresShape: 'bool',
      });
      expect(oldEr?.failures).toEqual([
        { podUid: 'pod-a', at: null },
        { podUid: 'pod-b', at: null },
      ]);
      expect(oldEr?.job.jobId).toBeNull();
    } finally {
      await old.server.stop();
    }

    seedEphemeralRunner(server, 'new-runner', {
      status: {
        phase: 'Running',
        ready: true,
        runnerId: 99,
        runnerName: 'new-runner',
        failures: { 'pod-x': '2026-01-05T08:59:00Z' },
        jobId: '7f1e2d3c-aaaa-bbbb-cccc-000000000001',
        jobRequestId: 5,
        jobRepositoryName: 'acme/app',
        workflowRunId: 3000000001,
        jobDisplayName: 'build (linux)',
        jobWorkflowRef: 'acme/app/.github/workflows/ci.yml@refs/heads/main',
      },
    });
    const gw = new KubeClusterGateway({ cluster: 'prod', kubeConfig: kubeConfigFor(server) });
    const er = await gw.getEphemeralRunner(NS, 'new-runner');
    expect(er).toMatchObject({
      phase: 'Running',
      ready: true,
      runnerId: 99,
      failuresShape: 'time',
    });
    expect(er?.failures).toEqual([{ podUid: 'pod-x', at: Date.parse('2026-01-05T08:59:00Z') }]);
    expect(er?.job).toEqual({
      jobId: '7f1e2d3c-aaaa-bbbb-cccc-000000000001',
      jobRequestId: 5,
      jobRepositoryName: 'acme/app',
      workflowRunId: 3000000001,
      jobDisplayName: 'build (linux)',
      jobWorkflowRef: 'acme/app/.github/workflows/ci.yml@refs/heads/main',
    });
  });

  it('gets a pod and answers null for a missing ER or pod', async () => {
    const er = seedEphemeralRunner(server, 'get-me');
    seedRunnerPod(server, 'get-me', { owner: er, nodeName: 'node-1' });
    const gw = new KubeClusterGateway({ cluster: 'prod', kubeConfig: kubeConfigFor(server) });
    const pod = await gw.getPod(NS, 'get-me');
    expect(pod).toMatchObject({ nodeName: 'node-1', phase: 'Running' });
    expect(pod?.metadata.labels['actions-ephemeral-runner']).toBe('True');
    expect(await gw.getPod(NS, 'absent')).toBeNull();
    expect(await gw.getEphemeralRunner(NS, 'absent')).toBeNull();
    expect(await gw.getEphemeralRunner('other', 'get-me')).toBeNull();
  });

  it('lists nodes with their provider id, conditions and taints', async () => {
    for (let i = 0; i < 5; i++) {
      server.api.create(
        'kubelet',
        'nodes',
        undefined,
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: `ip-10-0-0-${i}.ec2.internal`,
            labels: { 'karpenter.sh/nodepool': 'runners' },
          },
          spec: {
            providerID: `aws:///eu-west-1a/i-0${i}23456789abcdef0`,
            ...(i === 2
              ? { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] }
              : {}),
          },
          status: {
            conditions: [
              { type: 'Ready', status: i === 4 ? 'Unknown' : 'True', reason: 'KubeletReady' },
            ],
          },
        },
        { keepStatus: true },
      );
    }
    const gw = new KubeClusterGateway({
      cluster: 'prod',
      kubeConfig: kubeConfigFor(server),
      pageSize: 2,
    });
    const nodes = await gw.listNodes();
    expect(nodes).toHaveLength(5);
    expect(nodes[0]).toMatchObject({
      name: 'ip-10-0-0-0.ec2.internal',
      instanceId: 'i-0023456789abcdef0',
      cluster: 'prod',
    });
    expect(nodes[2]?.taints).toEqual([
      { key: 'karpenter.sh/disrupted', value: null, effect: 'NoSchedule' },
    ]);
    expect(nodes[4]?.conditions[0]).toMatchObject({ type: 'Ready', status: 'Unknown' });
    expect(
      server.audit.requests.filter((r) => r.verb === 'list' && r.path.startsWith('/api/v1/nodes')),
    ).toHaveLength(3);
  });

  it('skips and counts objects the parsers refuse, keeping the rest', async () => {
    seedEphemeralRunner(server, 'good-one');
    proxy.intercept = (req) => {
      if (req.method !== 'GET' || !req.url.includes('/ephemeralrunners')) return undefined;
      const list = server.api.list('ephemeralrunners', NS);
      return {
        status: 200,
        body: {
          kind: 'EphemeralRunnerList',
          apiVersion: 'actions.github.com/v1alpha1',
          metadata: {},
          items: [...list.items, { metadata: { name: '' } }, 'junk'],
        },
      };
    };
    const skipped: string[] = [];
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(proxy.url, server.token('runner-medic')));
    const gw = new KubeClusterGateway({
      cluster: 'prod',
      kubeConfig: kc,
      onUnparseable: (kind, reason) => skipped.push(`${kind}: ${reason}`),
    });
    const listing = await gw.listRunners(NS);
    expect(listing.ephemeralRunners.map((e) => e.metadata.name)).toContain('good-one');
    expect(listing.ephemeralRunners.length).toBe(
      server.api.list('ephemeralrunners', NS).items.length,
    );
    expect(gw.unparseable).toBe(2);
    expect(skipped).toHaveLength(2);
    expect(skipped[0]).toMatch(/^EphemeralRunner: not an EphemeralRunner/);
  });

  it('restarts a listing once when a continue token has expired (410)', async () => {
    for (let i = 0; i < 4; i++) seedEphemeralRunner(server, `expiry-${i}`, { namespace: 'other' });
    let expired = 0;
    proxy.intercept = (req) => {
      if (req.url.includes('continue=') && expired === 0) {
        expired++;
        return status(410, 'Expired', 'The provided continue parameter is too old');
      }
      return undefined;
    };
    const gw = gatewayVia(proxy.url);
    const listing = await gw.listRunners('other');
    expect(listing.ephemeralRunners.map((e) => e.metadata.name)).toEqual([
      'elsewhere',
      'expiry-0',
      'expiry-1',
      'expiry-2',
      'expiry-3',
    ]);
    expect(expired).toBe(1);
    const erCalls = proxy.seen.filter((r) => r.url.includes('/ephemeralrunners'));
    expect(erCalls.filter((r) => !r.url.includes('continue='))).toHaveLength(2);
  });
});
