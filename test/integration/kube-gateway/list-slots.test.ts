import { KubeConfig } from '@kubernetes/client-node';
import { KubeClusterGateway } from '../../../functions/adapters/kubernetes/kube-cluster-gateway.js';
import type { FollowedRunners } from '../../../functions/ports/cluster-gateway.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { kubeconfigYaml, LoopbackProxy } from './loopback-proxy.js';
import { seedEphemeralRunner, startSim } from './sim-fixture.js';

/**
 * A first sweep follows every runner namespace at once: its lists reach the API server at most 8
 * at a time, and each namespace is listed and then watched. Concurrency is counted by a proxy in
 * front of the Kubernetes API twin (the order of slots is tested in change-follower-list-slots).
 */
describe('following 30 namespaces of one cluster at once', () => {
  const NAMESPACES = Array.from({ length: 30 }, (_, i) => `runners-${i}`);
  let server: ApiServer;
  let proxy: LoopbackProxy;
  let gateway: KubeClusterGateway;

  beforeAll(async () => {
    ({ server } = await startSim());
    for (const name of NAMESPACES) {
      server.api.create('admin', 'namespaces', undefined, { metadata: { name } });
      seedEphemeralRunner(server, `${name}-runner`, { namespace: name });
    }
    proxy = new LoopbackProxy(server.httpUrl);
    await proxy.start();
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(proxy.url, server.token('runner-medic')));
    gateway = new KubeClusterGateway({ cluster: 'sim', kubeConfig: kc });
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  it('lists each namespace with no more than 8 lists in flight, then watches each', async () => {
    const states = NAMESPACES.map((): FollowedRunners => ({
      ephemeralRunners: { objects: new Map(), resourceVersion: null },
      pods: { objects: new Map(), resourceVersion: null },
    }));
    const listed = await Promise.all(
      NAMESPACES.map((ns, i) => gateway.followRunners(ns, states[i] as FollowedRunners)),
    );
    expect(listed.every((r) => r.listed)).toBe(true);
    expect(states.map((s) => s.ephemeralRunners.objects.size)).toEqual(NAMESPACES.map(() => 1));
    expect(proxy.inFlight.get('GET request')?.most).toBeLessThanOrEqual(8);
    expect(proxy.seen.filter((r) => !r.url.includes('watch=true'))).toHaveLength(60);

    const watched = await Promise.all(
      NAMESPACES.map((ns, i) => gateway.followRunners(ns, states[i] as FollowedRunners)),
    );
    expect(watched.every((r) => !r.listed)).toBe(true);
    // Every collection of every namespace resumed a watch (a cut one resumes once more).
    const watches = proxy.seen.filter((r) => r.url.includes('watch=true'));
    expect(new Set(watches.map((r) => r.url.split('?')[0])).size).toBe(60);
  });
});
