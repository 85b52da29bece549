import { runEngine } from '../../../functions/engine/run-engine.js';
import { measureEvent } from '../../bench/scale-events.js';
import { nodeName, ScaleWorld } from '../../bench/scale-world.js';

/**
 * A node signal is decided from the runners that took a job on the node, as the engine recorded
 * them (one store item a runner, which is its job cache too), so its cost follows the node, not
 * the number of runners or namespaces: no pod is listed and no runner object read unless a rule
 * would act on it. A runner is written once, when first seen with its job: an idle one, a second
 * pass, a runner id, nothing.
 */
const world = new ScaleWorld({
  ephemeralRunners: 400,
  storedJobs: 400,
  clusters: 2,
  namespaces: 20,
});
const runnersOnNodeWrites = () => world.meter.writes.filter((w) => /^NODE#\S+ RUNNER#/.test(w));
const jobCacheWrites = () => world.meter.writes.filter((w) => / ERJOB$/.test(w));

beforeAll(async () => {
  await world.start();
  await world.populate();
}, 300_000);
afterAll(() => world.stop());

describe('runners per node', () => {
  it('the first sweep notes each runner that took a job on its node once, and a second pass none', async () => {
    // The runners were created ten minutes before this first sweep after a deployment.
    world.clock.advance(600_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    const first = runnersOnNodeWrites();
    // 400 runners, each running a job, each noted once on its node: that is its job cache too.
    expect(first).toHaveLength(400);
    expect(new Set(first).size).toBe(400);
    expect(jobCacheWrites()).toEqual([]);

    world.clock.advance(120_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(runnersOnNodeWrites()).toEqual([]);
  }, 300_000);

  it('a runner is written once, when it takes a job: not when bound, registered, or every sweep at the deployed minute', async () => {
    // Bound and Pending just before a sweep, then registered: idle, it is not written.
    world.clock.advance(120_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    world.addRunner(7, 'arc-linux-late-runner', 7);
    const lateWrites = () => world.meter.writes.filter((w) => w.includes('late-runner'));
    world.meter.reset();
    for (let sweep = 0; sweep < 3; sweep++) {
      world.clock.advance(60_000);
      await runEngine({ kind: 'sweep' }, world.deps);
    }
    world.registerRunner(7, 'arc-linux-late-runner', 4242);
    for (let sweep = 0; sweep < 2; sweep++) {
      world.clock.advance(60_000);
      await runEngine({ kind: 'sweep' }, world.deps);
    }
    expect(lateWrites()).toEqual([]);

    world.takeJob(7, 'arc-linux-late-runner', 4242, 2_000_007);
    world.meter.reset();
    for (let sweep = 0; sweep < 3; sweep++) {
      world.clock.advance(60_000);
      await runEngine({ kind: 'sweep' }, world.deps);
    }
    // Its job is what it is recorded for: one write on its node, and no separate job cache.
    expect(lateWrites()).toEqual([
      expect.stringMatching(/^NODE#\S+ RUNNER#arc-7\/arc-linux-late-runner$/),
    ]);
    expect(runnersOnNodeWrites()).toHaveLength(1);
    const read = await world.store.readRunnerName('arc-linux-late-runner', world.clock.now());
    expect(read.facts.erJobCache.map((e) => [e.runnerId, e.job.workflowRunId])).toEqual([
      [4242, 9_002_000_007],
    ]);
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
    // 400 runners on 40 nodes: one read a cluster for its node signals (a new one decides its
    // node's runners), however many nodes and namespaces it has.
    expect(world.meter.queried.filter((k) => k.startsWith('SIGNALS#')).sort()).toEqual([
      'SIGNALS#cluster-0',
      'SIGNALS#cluster-1',
    ]);
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

  it('an idle runner on a warned node, which no record places, is replaced by the next sweep', async () => {
    // A runner ARC created beside runner 77, registered and idle: nothing records it on its node.
    world.addRunner(9, 'arc-linux-idle-runner', 77);
    world.registerRunner(9, 'arc-linux-idle-runner', 4343);
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    const deletesOf = (mark: number[]) =>
      world
        .kubeSince(mark)
        .requests.filter((q) => q.verb === 'delete')
        .map((q) => q.path.split('/').slice(-2).join('/'));

    // Its node is warned: the warning marks the node's busy runners at once, and knows no idle one.
    let mark = world.kubeMark();
    await measureEvent(world, 'spot-warning', 77);
    expect(deletesOf(mark)).toEqual([]);

    // The next sweep reads the cluster's signals, finds the new one, and decides the namespaces
    // of the pods on that node from what it follows: the idle runner is replaced (rule 6).
    mark = world.kubeMark();
    world.meter.reset();
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(deletesOf(mark)).toEqual(['ephemeralrunners/arc-linux-idle-runner']);
    // From what the watches follow: no runner is listed, no node partition read.
    expect(
      world
        .kubeSince(mark)
        .requests.filter((q) => q.verb === 'list' && !q.path.startsWith('/api/v1/nodes')),
    ).toEqual([]);
    expect(world.meter.queried.filter((k) => k.startsWith('NODE#'))).toEqual([]);

    // The signal is not new to the sweep after that: only the replaced runner's namespace, which
    // changed, is decided again, not the other namespaces of the node's pods.
    const onTheNode = world.neighboursOf(77).namespaces;
    expect(onTheNode).toBeGreaterThan(1);
    world.meter.reset();
    world.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, world.deps);
    const decided = world.meter.queried.filter((k) => k.startsWith('NS#'));
    expect(decided.every((k) => k.endsWith('/arc-9'))).toBe(true);
  }, 300_000);

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
