import { runEngine } from '../../../functions/engine/run-engine.js';
import { ScaleWorld, namespaceName, runnerName } from '../../bench/scale-world.js';

/**
 * Failure isolation with two clusters: one stops answering, and one event names a cluster that is
 * not configured. The healthy cluster's loss is still repaired within the usual grace period, the
 * unknown cluster's event is rejected and never stored, and nothing throws, now or later.
 */
const world = new ScaleWorld({ ephemeralRunners: 20, storedJobs: 0, clusters: 2, namespaces: 4 });
const metrics: { name: string; dimensions: Record<string, string> }[] = [];
const wakes: number[] = [];

beforeAll(async () => {
  await world.start();
  await world.populate();
  world.deps.metrics = {
    count: (name, dimensions) => void metrics.push({ name, dimensions }),
    milliseconds: () => undefined,
  };
  world.deps.wake = { wakeAt: async (at) => void wakes.push(at) };
  await runEngine({ kind: 'sweep' }, world.deps);
}, 120_000);
afterAll(() => world.stop());

const deletesIn = (cluster: number) =>
  (world.kubes[cluster]?.audit.entries ?? []).filter(
    (e) => e.by === 'runner-medic' && e.verb === 'delete',
  );

describe('two clusters, one unreachable, and an event for a cluster not configured', () => {
  it('repairs the healthy cluster, rejects the unknown one, and sets the unreachable one aside', async () => {
    // Runners 0 and 1 live in namespaces 0 and 1: cluster-0 and cluster-1.
    const healthy = world.evict(0);
    const cutOff = world.evict(1);
    const ghost = { ...world.evict(4), cluster: 'ghost' };
    expect(healthy.cluster).toBe('cluster-0');
    expect(cutOff.cluster).toBe('cluster-1');
    await world.kubes[1]?.stop();

    const trigger = {
      kind: 'cluster' as const,
      input: { kind: 'kube-events' as const, events: [healthy, cutOff, ghost], rejected: [] },
    };
    await expect(runEngine(trigger, world.deps)).resolves.toBeDefined();
    expect(metrics).toContainEqual({
      name: 'InputRejected',
      dimensions: { reason: 'unknown-cluster' },
    });
    expect(metrics).toContainEqual({
      name: 'ClusterUnavailable',
      dimensions: { cluster: 'cluster-1' },
    });
    const stored = await world.store.scanAll(world.clock.now());
    expect(stored.losses.map((l) => l.cluster).sort()).toEqual(['cluster-0', 'cluster-1']);

    // Every wake from here on: the healthy loss is repaired at the end of its grace period; the
    // unreachable cluster's runner is retried with backoff and then set aside. Nothing throws.
    for (let round = 0; round < 12; round++) {
      const next = wakes.filter((w) => w > world.clock.now()).sort((a, b) => a - b)[0];
      if (next === undefined) break;
      await world.clock.advanceTo(next);
      await expect(runEngine({ kind: 'wake' }, world.deps)).resolves.toBeDefined();
    }
    expect(deletesIn(0).map((d) => [d.resource, d.namespace, d.name])).toEqual([
      ['ephemeralrunners.actions.github.com', namespaceName(0), runnerName(0, 0)],
    ]);
    expect(metrics.filter((m) => m.name === 'SubjectSetAside')).toEqual([
      { name: 'SubjectSetAside', dimensions: { cluster: 'cluster-1' } },
    ]);
    const asides = world.bus.entries.filter((e) => e.DetailType === 'SubjectSetAside');
    expect(asides).toHaveLength(1);
    // Set aside: a later wake or sweep does not touch it and does not throw.
    await expect(runEngine({ kind: 'sweep' }, world.deps)).resolves.toBeDefined();
    expect(stored.losses.some((l) => l.cluster === 'ghost')).toBe(false);
  });
});
