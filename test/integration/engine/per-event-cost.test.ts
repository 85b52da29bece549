import { measureEvent, measureTrigger } from '../../bench/scale-events.js';
import { ScaleWorld } from '../../bench/scale-world.js';

/**
 * Cost follows the work: at 1,000 runners and 1,000 stored jobs, one event reads a bounded
 * number of store items and lists nothing across a cluster (the bounds are a few items, so a cost
 * that grew with the world would break them by two orders of magnitude; the bench's `scale`
 * section measures the same events up to 10,000, and 50,000 with `--full`). Counted from the
 * Kubernetes twin's request log and from dynalite's answers, not from mocks.
 */
const world = new ScaleWorld({
  ephemeralRunners: 1_000,
  storedJobs: 1_000,
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
  // The node of runner 202 as the sweep records it from the Node's providerID.
  await world.recordNodeOfRunner(202);
}, 900_000);
afterAll(() => world.stop());

describe('per-event cost at 1,000 runners and 1,000 stored jobs', () => {
  it('a pod eviction reads at most 10 store items, makes at most 3 Kubernetes reads and no list', async () => {
    const mark = world.kubeMark();
    const cost = await measureEvent(world, 'pod-eviction', 432);
    expect(cost.storeReads).toBeLessThanOrEqual(10);
    expect(cost.kubeLists).toBe(0);
    const requests = world.kubeSince(mark).requests;
    const reads = requests.filter((r) => ['get', 'list', 'watch'].includes(r.verb));
    expect(reads.length).toBeLessThanOrEqual(3);
    // The runner had taken a job, which ARC will not re-run: its slot is freed (rule 1).
    expect(requests.filter((r) => !reads.includes(r)).map((r) => r.verb)).toEqual(['delete']);
    expect(cost.githubCalls).toBeLessThanOrEqual(3);
  });

  it('a workflow_job.completed webhook reads at most 10 store items and lists nothing', async () => {
    const cost = await measureEvent(world, 'workflow_job.completed', 777);
    expect(cost.storeReads).toBeLessThanOrEqual(10);
    expect(cost.kubeLists).toBe(0);
    expect(cost.kubeCalls).toBeLessThanOrEqual(3);
    expect(cost.githubCalls).toBeLessThanOrEqual(3);
  });

  it('a spot warning reads the node, a store item per runner on it, and no runner object', async () => {
    const cost = await measureEvent(world, 'spot-warning', 202);
    // In this world a node's runners each come from another of the cluster's 50 namespaces.
    const here = world.neighboursOf(202);
    expect(here.runners).toBeGreaterThan(1);
    expect(here.namespaces).toBe(here.runners);
    // The node's partition, then each runner's name: its job, and its record on the node (which
    // is its job cache too, found by name when its EphemeralRunner is gone).
    expect(cost.storeReads).toBeLessThanOrEqual(10 + 3 * here.runners);
    expect(cost.kubeLists).toBe(0);
    // The node by name; its runners are decided from what the sweep proved of them (each runs
    // a job, so each is marked at risk: nothing destructive, no live object needed).
    expect(cost.kubeCalls).toBeLessThanOrEqual(3);
    expect(cost.githubCalls).toBeLessThanOrEqual(3);
  });

  it('a GitHub-hosted job’s webhook reads one store item and calls no cluster', async () => {
    const record = world.completedJob(778);
    const cost = await measureTrigger(world, {
      kind: 'observation',
      observation: {
        kind: 'job.completed',
        deliveryId: 'delivery-hosted',
        installationId: record.installationId,
        repository: record.repository,
        receivedAt: new Date(world.clock.now()).toISOString(),
        job: {
          ...record.job,
          jobId: 9_999_999,
          labels: ['ubuntu-latest'],
          runnerName: 'GitHub Actions 2',
        },
      },
    });
    expect(cost.storeReads).toBeLessThanOrEqual(1);
    expect(cost.kubeCalls).toBe(0);
    expect(cost.githubCalls).toBe(0);
    // Nothing of it is stored.
    expect(world.meter.writes).toEqual([]);
  });

  it('an event of a pod that is not a runner calls no cluster', async () => {
    // An eviction Event as the kubelet writes it, about a pod of another namespace.
    const evicted = world.evict(779);
    const event = {
      ...evicted,
      namespace: 'web',
      involvedObject: {
        ...evicted.involvedObject,
        namespace: 'web',
        name: 'api-5d8f7-abcde',
        labels: {},
        ownerReferences: [],
      },
    };
    const cost = await measureTrigger(world, {
      kind: 'cluster',
      input: { kind: 'kube-events', events: [event], rejected: [] },
    });
    expect(cost.storeReads).toBeLessThanOrEqual(1);
    expect(cost.kubeCalls).toBe(0);
  });

  it('an EC2 event of an instance that is not a known node reads one item and calls no cluster', async () => {
    const cost = await measureTrigger(world, {
      kind: 'cluster',
      input: {
        kind: 'ec2',
        event: {
          kind: 'ec2-spot-interruption-warning',
          instanceId: 'i-0notanode000000',
          instanceAction: 'terminate',
          region: 'eu-west-1',
          account: '123456789012',
          at: world.clock.now(),
        },
      },
    });
    expect(cost.storeReads).toBeLessThanOrEqual(1);
    expect(cost.kubeCalls).toBe(0);
  });
});
