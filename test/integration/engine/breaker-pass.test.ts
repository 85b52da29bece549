import { runEngine } from '../../../functions/engine/run-engine.js';
import type { FactsStore } from '../../../functions/ports/facts-store.js';
import { namespaceName, ScaleWorld } from '../../bench/scale-world.js';

/**
 * A destructive call is checked against the breaker as it is claimed, not only by its slice: a
 * slice read before other invocations counted their losses still cannot act past the breaker
 * they filled. The call is held, listed on the breaker, and decided again when it closes.
 */
const world = new ScaleWorld({ ephemeralRunners: 1, storedJobs: 0, clusters: 1, namespaces: 1 });
const wakes: number[] = [];

beforeAll(async () => {
  await world.start();
  await world.populate();
  world.deps.wake = { wakeAt: async (at) => void wakes.push(at) };
}, 120_000);
afterAll(() => world.stop());

const medicDeletes = () =>
  (world.kubes[0]?.audit.entries ?? []).filter(
    (e) => e.by === 'runner-medic' && e.verb === 'delete',
  );

describe('a destructive call passes the breaker as it is claimed', () => {
  it('is held when other invocations filled the breaker after its slice was read', async () => {
    const lostAt = world.clock.now();
    const event = world.evict(0);
    const trigger = {
      kind: 'cluster' as const,
      input: { kind: 'kube-events' as const, events: [event], rejected: [] },
    };
    await runEngine(trigger, world.deps);
    // Past rule 1's grace the EphemeralRunner's delete is due.
    await world.clock.advance(200_000);
    const store = world.deps.store;
    const cluster = world.clusterName(0);
    let raced = false;
    // Nine more losses of the scale set, counted by other invocations between this slice's read
    // and its call.
    const racing: FactsStore = Object.assign(Object.create(store) as FactsStore, {
      passBreaker: async (...args: Parameters<FactsStore['passBreaker']>) => {
        if (!raced) {
          raced = true;
          for (let i = 0; i < 9; i++)
            await store.countLoss(
              { cluster, scaleSet: 'arc-linux', runner: `${cluster}/other/r${i}`, at: args[2] },
              900_000,
              args[2],
            );
        }
        return store.passBreaker(...args);
      },
    });
    const report = await runEngine(trigger, { ...world.deps, store: racing });

    expect(raced).toBe(true);
    expect(medicDeletes()).toEqual([]);
    expect(report.actions.filter((a) => a.kind === 'delete-ephemeral-runner')).toEqual([]);
    expect(report.held).toContainEqual(
      expect.objectContaining({
        kind: 'delete-ephemeral-runner',
        why: `circuit breaker open: 10 losses in 900 s on ${cluster}/arc-linux (threshold 10)`,
      }),
    );
    const holding = world.bus.entries.filter((e) => e.DetailType === 'BreakerHolding');
    expect(holding.length).toBe(1);
    expect(JSON.parse(holding[0]?.Detail ?? '{}')).toMatchObject({
      cluster,
      scaleSet: 'arc-linux',
      held: [expect.stringContaining(namespaceName(0))],
    });
    // Decided again once the first of those losses, its own, leaves the window.
    expect(wakes).toContain(lostAt + 900_000);
  }, 120_000);
});
