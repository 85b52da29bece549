import { runEngine } from '../../../functions/engine/run-engine.js';
import { ScaleWorld } from '../../bench/scale-world.js';

/**
 * The breaker's trip is state kept in the store: losses seen by separate event slices add up in
 * its counter, it trips once, stays open for its whole window while the count would drop, lists
 * what it holds, and the held work is decided again when it closes, in the order it was held.
 */
const world = new ScaleWorld({ ephemeralRunners: 12, storedJobs: 0, clusters: 1, namespaces: 1 });
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
const busOf = (type: string) =>
  world.bus.entries
    .filter((e) => e.DetailType === type)
    .map((e) => JSON.parse(e.Detail) as Record<string, unknown>);

describe('the breaker as stored state, through the engine', () => {
  it('adds up losses across slices, stays open for its window, and decides held work on close', async () => {
    // Twelve runners evicted one event at a time: each event is its own slice.
    for (let r = 0; r < 12; r++) {
      const event = world.evict(r);
      await runEngine(
        { kind: 'cluster', input: { kind: 'kube-events', events: [event], rejected: [] } },
        world.deps,
      );
      await world.clock.advance(1000);
    }
    const trips = busOf('Remediation').filter((e) => e.action === 'trip-breaker');
    expect(trips.length).toBeGreaterThanOrEqual(1);
    const opened = world.clock.now();

    // Past every grace period but inside the window: nothing destructive happens; held work is listed.
    // Every stored timer falls due in this time, in steps of 10 s.
    const within = opened + 600_000;
    while (world.clock.now() + 10_000 <= within) {
      await world.clock.advance(10_000);
      await runEngine({ kind: 'wake' }, world.deps);
    }
    expect(medicDeletes()).toEqual([]);
    const holding = busOf('BreakerHolding');
    expect(holding.length).toBeGreaterThan(0);
    expect((holding[holding.length - 1]?.held as string[]).length).toBeGreaterThan(0);

    // After the window the breaker closes, and the held runners are decided again.
    for (let round = 0; round < 20; round++) {
      const next = wakes.filter((w) => w > world.clock.now()).sort((a, b) => a - b)[0];
      if (next === undefined) break;
      await world.clock.advanceTo(next);
      await runEngine({ kind: 'wake' }, world.deps);
    }
    expect(medicDeletes().length).toBe(12);
    // In the order the breaker held them.
    const held = [
      ...new Set(holding.flatMap((h) => (h.held as string[]).map((k) => k.split('|')[3]))),
    ];
    const deleted = medicDeletes().map((e) => e.name);
    expect(held.length).toBeGreaterThan(1);
    expect(deleted.filter((n) => n !== undefined && held.includes(n))).toEqual(held);
  }, 300_000);
});
