import { measureEvent } from '../../bench/scale-events.js';
import { ScaleWorld } from '../../bench/scale-world.js';

/**
 * Cost follows the work: at 10,000 runners and 10,000 stored jobs, one event reads a bounded
 * number of store items and lists nothing across a cluster. Counted from the Kubernetes twin's
 * request log and from dynalite's answers, not from mocks.
 */
const world = new ScaleWorld({
  ephemeralRunners: 10_000,
  storedJobs: 10_000,
  clusters: 2,
  namespaces: 100,
});

beforeAll(async () => {
  await world.start();
  await world.populate();
  // Where the scale set lives, as the first sweep after a deployment records it.
  for (let c = 0; c < 2; c++)
    await world.store.recordScaleSets(
      world.clusterName(c),
      world.scaleSetRegistry(c),
      world.clock.now(),
    );
  // The node of runner 2024 as the sweep records it from the Node's providerID.
  await world.recordNodeOfRunner(2024);
}, 900_000);
afterAll(() => world.stop());

describe('per-event cost at 10,000 runners and 10,000 stored jobs', () => {
  it('a pod eviction reads at most 10 store items, makes at most 3 Kubernetes calls and no list', async () => {
    const cost = await measureEvent(world, 'pod-eviction', 4321);
    expect(cost.storeReads).toBeLessThanOrEqual(10);
    expect(cost.kubeLists).toBe(0);
    expect(cost.kubeCalls).toBeLessThanOrEqual(3);
    expect(cost.githubCalls).toBeLessThanOrEqual(3);
  });

  it('a workflow_job.completed webhook reads at most 10 store items and lists nothing', async () => {
    const cost = await measureEvent(world, 'workflow_job.completed', 777);
    expect(cost.storeReads).toBeLessThanOrEqual(10);
    expect(cost.kubeLists).toBe(0);
    expect(cost.kubeCalls).toBeLessThanOrEqual(4);
    expect(cost.githubCalls).toBeLessThanOrEqual(3);
  });

  it('a spot warning reads the node and one item per runner on it, and lists only that node’s pods', async () => {
    const cost = await measureEvent(world, 'spot-warning', 2024);
    // 10 runners per node in this world.
    expect(cost.storeReads).toBeLessThanOrEqual(10 + 10);
    expect(cost.kubeClusterWideLists).toBe(0);
    expect(cost.kubeLists).toBeLessThanOrEqual(world.namespacesOf(0).length);
  });
});
