import { KubeClusterGateway } from '../../../functions/adapters/kubernetes/kube-cluster-gateway.js';
import type { FollowedRunners } from '../../../functions/ports/cluster-gateway.js';
import type { ApiServer } from '../../../sim/kube/api/api-server.js';
import { kubeConfigFor, NS, seedEphemeralRunner, seedRunnerPod, startSim } from './sim-fixture.js';

/**
 * followRunners over the real client-node (lists, and its Watch on a real socket) against the
 * Kubernetes API twin: counts come from the twin's request log.
 */
describe('following a namespace of runners by list, then watch', () => {
  let server: ApiServer;
  let gateway: KubeClusterGateway;

  beforeEach(async () => {
    ({ server } = await startSim());
    gateway = new KubeClusterGateway({
      cluster: 'sim',
      kubeConfig: kubeConfigFor(server),
      pageSize: 2,
    });
    for (const name of ['runner-a', 'runner-b', 'runner-c']) {
      const er = seedEphemeralRunner(server, name);
      seedRunnerPod(server, name, { owner: er });
    }
  });
  afterEach(() => server.stop());

  const fresh = (): FollowedRunners => ({
    ephemeralRunners: { objects: new Map(), resourceVersion: null },
    pods: { objects: new Map(), resourceVersion: null },
  });
  const mark = () => server.audit.requests.length;
  /** runner-medic's requests since `from`, as `verb resource`. */
  const requests = (from: number) =>
    server.audit.requests
      .slice(from)
      .filter((r) => r.by === 'runner-medic')
      .map(
        (r) => `${r.verb} ${r.path.includes('/ephemeralrunners') ? 'ephemeralrunners' : 'pods'}`,
      );
  const count = (from: number, call: string) => requests(from).filter((r) => r === call).length;
  /** What the followed state holds, as the twin itself lists it: names and ER phases. */
  const holds = (state: FollowedRunners) => ({
    ers: [...state.ephemeralRunners.objects.values()].map(
      (e) => `${e.metadata.name} ${e.phase ?? '-'}`,
    ),
    pods: [...state.pods.objects.values()].map((p) => p.metadata.name),
  });
  const twin = () => ({
    ers: server.store
      .scan('ephemeralrunners.actions.github.com', NS)
      .map(
        (o) => `${o.metadata.name} ${(o.status as { phase?: string } | undefined)?.phase ?? '-'}`,
      ),
    pods: server.store.scan('pods', NS).map((o) => o.metadata.name as string),
  });
  const sorted = (h: { ers: string[]; pods: string[] }) => ({
    ers: [...h.ers].sort(),
    pods: [...h.pods].sort(),
  });
  /** Changes made while nobody watches: one modified, one deleted, one new runner. */
  const change = () => {
    server.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      'runner-a',
      (o) => void (o.status = { phase: 'Failed', reason: 'TooManyPodFailures' }),
      { subresource: 'status' },
    );
    server.api.delete('admin', 'pods', NS, 'runner-b', { gracePeriodSeconds: 0 });
    const er = seedEphemeralRunner(server, 'runner-d');
    seedRunnerPod(server, 'runner-d', { owner: er });
  };

  it('lists without a cursor, then an idle watch ends at its bookmark having read no object', async () => {
    const state = fresh();
    const listed = await gateway.followRunners(NS, state);
    expect(listed.listed).toBe(true);
    expect(sorted(holds(state))).toEqual(sorted(twin()));

    const from = mark();
    const rvBefore = Number(state.ephemeralRunners.resourceVersion);
    server.api.create('admin', 'namespaces', undefined, { metadata: { name: 'elsewhere' } });
    const idle = await gateway.followRunners(NS, state);
    expect(idle).toEqual({ listed: false, changed: new Set() });
    expect(requests(from).sort()).toEqual(['watch ephemeralrunners', 'watch pods']);
    const objects = server.audit.requests.slice(from).reduce((n, r) => n + (r.objects ?? 0), 0);
    expect(objects).toBe(0);
    // The bookmark moved the cursor past a change elsewhere in the cluster.
    expect(Number(state.ephemeralRunners.resourceVersion)).toBeGreaterThan(rvBefore);
  }, 30_000);

  it('applies what changed since its cursor, and reads only those objects', async () => {
    const state = fresh();
    await gateway.followRunners(NS, state);
    change();
    const from = mark();
    const r = await gateway.followRunners(NS, state);
    expect(r.listed).toBe(false);
    expect([...r.changed].sort()).toEqual([`${NS}/runner-a`, `${NS}/runner-b`, `${NS}/runner-d`]);
    expect(count(from, 'list ephemeralrunners') + count(from, 'list pods')).toBe(0);
    expect(sorted(holds(state))).toEqual(sorted(twin()));
    expect(state.ephemeralRunners.objects.get(`${NS}/runner-a`)?.phase).toBe('Failed');
  }, 30_000);

  it('a cursor answered 410 relists once, and misses nothing', async () => {
    const state = fresh();
    await gateway.followRunners(NS, state);
    change();
    // etcd compacted past the cursor: the watch cache answers 410 Expired.
    server.store.compact();
    const from = mark();
    const r = await gateway.followRunners(NS, state);
    expect(r.listed).toBe(true);
    expect(count(from, 'watch ephemeralrunners')).toBe(1);
    expect(count(from, 'watch pods')).toBe(1);
    // One list of each (pageSize 2: three runners are two pages of one consistent list).
    const lists = server.audit.requests
      .slice(from)
      .filter((r) => r.by === 'runner-medic' && r.verb === 'list');
    expect(lists.filter((l) => !l.path.includes('continue=')).length).toBe(2);
    expect(sorted(holds(state))).toEqual(sorted(twin()));
  }, 30_000);

  it('a watch cut mid-stream resumes from its last resourceVersion, without a list', async () => {
    const state = fresh();
    await gateway.followRunners(NS, state);
    change();
    let cuts = 1;
    server.store.watchFault = (resource) =>
      resource === 'ephemeralrunners.actions.github.com' && cuts-- > 0 ? 'cut' : undefined;
    const from = mark();
    const r = await gateway.followRunners(NS, state);
    expect(r.listed).toBe(false);
    expect(count(from, 'watch ephemeralrunners')).toBe(2);
    expect(count(from, 'list ephemeralrunners')).toBe(0);
    expect(sorted(holds(state))).toEqual(sorted(twin()));
  }, 30_000);

  it('a watch that cannot resume ends in one clean relist, never a skipped change', async () => {
    const state = fresh();
    await gateway.followRunners(NS, state);
    change();
    server.store.watchFault = (resource) =>
      resource === 'ephemeralrunners.actions.github.com' ? 'cut' : undefined;
    const from = mark();
    const r = await gateway.followRunners(NS, state);
    expect(r.listed).toBe(true);
    expect(count(from, 'watch ephemeralrunners')).toBe(2);
    expect(count(from, 'watch pods')).toBe(1);
    const erLists = server.audit.requests
      .slice(from)
      .filter((q) => q.by === 'runner-medic' && q.verb === 'list')
      .filter((q) => q.path.includes('/ephemeralrunners') && !q.path.includes('continue='));
    expect(erLists.length).toBe(1);
    expect(count(from, 'list pods')).toBe(0);
    expect(sorted(holds(state))).toEqual(sorted(twin()));
  }, 30_000);
});

describe('following the nodes by list, then watch', () => {
  let server: ApiServer;
  let gateway: KubeClusterGateway;

  beforeEach(async () => {
    ({ server } = await startSim());
    gateway = new KubeClusterGateway({
      cluster: 'sim',
      kubeConfig: kubeConfigFor(server),
      pageSize: 2,
    });
    for (const name of ['node-a', 'node-b', 'node-c'])
      server.api.create('admin', 'nodes', undefined, { metadata: { name } });
  });
  afterEach(() => server.stop());

  const nodeCalls = (from: number) =>
    server.audit.requests
      .slice(from)
      .filter((r) => r.by === 'runner-medic' && r.path.startsWith('/api/v1/nodes'))
      .map((r) => r.verb);

  it('lists once, then resumes a watch that reads only the node that changed', async () => {
    const state = { objects: new Map(), resourceVersion: null };
    let from = server.audit.requests.length;
    expect((await gateway.followNodes(state)).listed).toBe(true);
    expect(nodeCalls(from).filter((v) => v === 'list')).toHaveLength(2); // 3 nodes, pages of 2
    expect([...state.objects.keys()].sort()).toEqual(['/node-a', '/node-b', '/node-c']);

    from = server.audit.requests.length;
    const quiet = await gateway.followNodes(state);
    expect(quiet).toEqual({ listed: false, changed: new Set() });
    expect(nodeCalls(from)).toEqual(['watch']);

    server.api.modify(
      'kubelet',
      'nodes',
      undefined,
      'node-b',
      (o) => void (o.status = { conditions: [{ type: 'Ready', status: 'False' }] }),
      { subresource: 'status' },
    );
    server.api.delete('admin', 'nodes', undefined, 'node-c', {});
    from = server.audit.requests.length;
    const changed = await gateway.followNodes(state);
    expect(changed).toEqual({ listed: false, changed: new Set(['/node-b', '/node-c']) });
    expect(nodeCalls(from)).toEqual(['watch']);
    expect([...state.objects.keys()].sort()).toEqual(['/node-a', '/node-b']);
  }, 30_000);
});
