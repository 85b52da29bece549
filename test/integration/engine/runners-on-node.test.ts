import { runEngine } from '../../../functions/engine/run-engine.js';
import { measureEvent } from '../../bench/scale-events.js';
import { nodeName, ScaleWorld } from '../../bench/scale-world.js';

/**
 * A node signal is decided from the runner pods the sweep proved bound to the node (one store
 * item a runner), so its cost follows the node, not the number of runners or namespaces: no pod
 * is listed and no runner object read unless a rule would act on it. The sweep notes a pod from
 * new pods only: a second pass over unchanged pods writes nothing.
 */
const world = new ScaleWorld({
  ephemeralRunners: 400,
  storedJobs: 400,
  clusters: 2,
  namespaces: 100,
});
const runnersOnNodeWrites = () => world.meter.writes.filter((w) => /^NODE#\S+ RUNNER#/.test(w));

beforeAll(async () => {
  await world.start();
  await world.populate();
}, 300_000);
afterAll(() => world.stop());

describe('runners per node', () => {
  it('the first sweep notes each runner pod on its node once, and a second pass none', async () => {
    // The runners were created ten minutes before this first sweep after a deployment.
    world.clock.advance(600_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    const first = runnersOnNodeWrites();
    // 400 runner pods, each noted once on its node.
    expect(first).toHaveLength(400);
    expect(new Set(first).size).toBe(400);

    world.clock.advance(120_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(runnersOnNodeWrites()).toEqual([]);
  }, 300_000);

  it('a runner pod is written when first bound and when ARC registers it, not every sweep at the deployed minute', async () => {
    // Bound and Pending just before a sweep: new by its creation time for the next two passes
    // and Pending until the kubelet runs it, yet unchanged between them.
    world.clock.advance(120_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    world.addRunner(7, 'arc-linux-late-runner', 7);
    const lateWrites = () => runnersOnNodeWrites().filter((w) => w.includes('late-runner'));
    world.meter.reset();
    for (let sweep = 0; sweep < 4; sweep++) {
      world.clock.advance(60_000);
      await runEngine({ kind: 'sweep' }, world.deps);
    }
    expect(lateWrites()).toHaveLength(1);

    world.registerRunner(7, 'arc-linux-late-runner', 4242);
    world.meter.reset();
    for (let sweep = 0; sweep < 3; sweep++) {
      world.clock.advance(60_000);
      await runEngine({ kind: 'sweep' }, world.deps);
    }
    // Its runner id is what changed: one write, then none.
    expect(lateWrites()).toHaveLength(1);
    expect(runnersOnNodeWrites()).toHaveLength(1);
  }, 300_000);

  it('the sweep reads a node when its runner pods change: a status report reads and decides nothing, a node gone NotReady decides its runners’ namespaces', async () => {
    const decided = () =>
      world.meter.queried.filter((k) => k.startsWith('NS#')).map((k) => k.split('/')[1]);
    const nodesRead = (mark: number[]) =>
      world.kubeSince(mark).requests.filter((r) => r.path.startsWith('/api/v1/nodes'));
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);

    world.reportNodeOfRunner(355, true);
    world.meter.reset();
    let mark = world.kubeMark();
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(decided()).toEqual([]);
    // Nodes are not watched: a kubelet's report, which changes no pod, costs no read.
    expect(nodesRead(mark)).toEqual([]);

    const namespaces = world.reportNodeOfRunner(355, false);
    world.meter.reset();
    mark = world.kubeMark();
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(new Set(decided())).toEqual(namespaces);
    // The pods the node lifecycle controller marked not ready name their node: it alone is read.
    const read = nodesRead(mark);
    const node = nodeName((world.layout[355] as { node: number }).node);
    expect(read.map((r) => decodeURIComponent(r.path))).toEqual([
      expect.stringContaining(`fieldSelector=metadata.name=${node}`),
    ]);
    expect(read.reduce((n, r) => n + (r.objects ?? 0), 0)).toBe(1);
    world.reportNodeOfRunner(355, true);
  }, 300_000);

  it('a sweep reads each cluster’s node signals in one query, and never a node’s runners', async () => {
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    const namespaces = world.reportNodeOfRunner(42, false);
    world.meter.reset();
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    const decided = world.meter.queried.filter((k) => k.startsWith('NS#'));
    expect(decided.length).toBeGreaterThanOrEqual(namespaces.size);
    // 400 runners on 40 nodes: one read for the signals of the cluster whose namespaces were
    // decided, however many of its nodes their pods sit on.
    expect(world.meter.queried.filter((k) => k.startsWith('SIGNALS#'))).toHaveLength(1);
    expect(world.meter.queried.filter((k) => k.startsWith('NODE#'))).toEqual([]);
    world.reportNodeOfRunner(42, true);
  }, 300_000);

  it('a spot warning reads the node only, and marks every busy runner on it at risk', async () => {
    const r = 123;
    const here = world.neighboursOf(r);
    expect(here.runners).toBeGreaterThan(1);
    const mark = world.kubeMark();
    const cost = await measureEvent(world, 'spot-warning', r);
    const requests = world.kubeSince(mark).requests;
    // The node by name; no pod list, no runner object: the sweep proved them ARC's.
    expect(requests).toHaveLength(1);
    expect(requests[0]?.path).toContain('/api/v1/nodes');
    expect(cost.kubeCalls).toBe(1);
    expect(cost.kubeClusterWideLists).toBe(0);
    // Every runner on the node runs a job in this world: each is marked at risk, and none missed.
    const marked: string[] = [];
    for (const name of world.runnersOnNodeOf(r)) {
      const read = await world.store.readRunnerName(name, world.clock.now());
      if (read.facts.actions.some((a) => a.kind === 'mark-at-risk')) marked.push(name);
    }
    expect(marked).toHaveLength(here.runners);
  }, 120_000);

  it('a runner of the node just read live (lost, its job done) is not read again from memory', async () => {
    // As the bench plays it: one runner's pod is evicted, its job completes, then its node is
    // warned. The slice reads that runner's objects for its stored loss; memory adds no read.
    const r = 257;
    await measureEvent(world, 'pod-eviction', r);
    await measureEvent(world, 'workflow_job.completed', r);
    const mark = world.kubeMark();
    const cost = await measureEvent(world, 'spot-warning', r);
    const paths = world.kubeSince(mark).requests.map((q) => q.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(cost.kubeCalls).toBeLessThanOrEqual(3);
    expect(cost.kubeLists).toBe(0);
  }, 120_000);

  it('a node the sweep never saw a runner on lists nothing', async () => {
    const mark = world.kubeMark();
    await world.store.recordInstance(
      'i-0empty',
      world.clusterName(0),
      'ip-10-9-9-9',
      world.clock.now(),
    );
    await measureEventForInstance('i-0empty');
    const lists = world
      .kubeSince(mark)
      .requests.filter((q) => q.verb === 'list' && q.path.includes('/pods'));
    expect(lists).toEqual([]);
  });
});

async function measureEventForInstance(instanceId: string): Promise<void> {
  await runEngine(
    {
      kind: 'cluster',
      input: {
        kind: 'ec2',
        event: {
          kind: 'ec2-spot-interruption-warning',
          instanceId,
          instanceAction: 'terminate',
          region: 'eu-west-1',
          account: '123456789012',
          at: world.clock.now(),
        },
      },
    },
    world.deps,
  );
}
