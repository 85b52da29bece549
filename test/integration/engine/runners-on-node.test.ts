import { runEngine } from '../../../functions/engine/run-engine.js';
import { measureEvent } from '../../bench/scale-events.js';
import { ScaleWorld } from '../../bench/scale-world.js';

/**
 * A node signal lists runner pods on the node only in the namespaces the sweep saw runners of
 * there, so its cost follows the node, not the number of runner namespaces. The sweep notes a
 * node's namespaces from new pods only: a second pass over unchanged pods writes nothing.
 */
const world = new ScaleWorld({
  ephemeralRunners: 400,
  storedJobs: 400,
  clusters: 2,
  namespaces: 100,
});
const runnersOnNodeWrites = () => world.meter.writes.filter((w) => / NS#/.test(w));

beforeAll(async () => {
  await world.start();
  await world.populate();
}, 300_000);
afterAll(() => world.stop());

describe('runner namespaces per node', () => {
  it('the first sweep notes each node’s runner namespaces once, and a second pass none', async () => {
    // The runners were created ten minutes before this first sweep after a deployment.
    world.clock.advance(600_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    const first = runnersOnNodeWrites();
    // 400 runners, 10 a node, each node's runners from 10 namespaces split over 2 clusters.
    expect(first).toHaveLength(400);
    expect(new Set(first).size).toBe(400);

    world.clock.advance(120_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(runnersOnNodeWrites()).toEqual([]);
  }, 300_000);

  it('a spot warning lists pods only in its node’s namespaces, and finds every runner there', async () => {
    const r = 123;
    const here = world.neighboursOf(r);
    const mark = world.kubeMark();
    const cost = await measureEvent(world, 'spot-warning', r);
    const requests = world.kubeSince(mark).requests;
    const podLists = requests.filter((q) => q.verb === 'list' && q.path.includes('/pods?'));
    expect(podLists).toHaveLength(here.namespaces);
    expect(podLists.every((q) => q.path.includes('fieldSelector=spec.nodeName'))).toBe(true);
    // Every runner on the node is read by name: none is missed for want of a list.
    const erGets = requests.filter(
      (q) => q.verb === 'get' && q.path.includes('/ephemeralrunners/'),
    );
    expect(erGets).toHaveLength(here.runners);
    expect(cost.kubeClusterWideLists).toBe(0);
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
