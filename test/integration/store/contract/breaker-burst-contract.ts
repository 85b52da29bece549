import fc from 'fast-check';
import type { BreakerGate } from '../../../../functions/domain/decide/rules/circuit-breaker.js';
import type { FactsStore } from '../../../../functions/ports/facts-store.js';

export interface BreakerStoreUnderTest {
  store: FactsStore;
  close(): Promise<void>;
}

/**
 * The breaker under a burst: N runners lost at once, their losses counted and their rescues
 * passed by K invocations running concurrently against one store (dynalite through the real AWS
 * SDK client, or one SQLite file). Whatever the interleaving, at most `limit` rescues pass in the
 * window.
 */
let subject: BreakerStoreUnderTest;
let store: FactsStore;
const T0 = Date.parse('2026-03-01T12:00:00Z');
const WINDOW_MS = 900_000;
const LIMIT = 10;
let worlds = 0;

/** A scale set of its own for each generated world, so that worlds never share a breaker. */
function freshGate(): BreakerGate {
  worlds++;
  return { cluster: `eks-${worlds}`, scaleSet: 'arc-linux', limit: LIMIT, windowMs: WINDOW_MS };
}

interface Burst {
  invocations: number;
  /** Per lost runner: which invocation sees it, and whether its loss is confirmed (counted). */
  runners: { invocation: number; counted: boolean; calls: number }[];
}

const burstOf = (n: number) =>
  fc.integer({ min: 2, max: 40 }).chain((k) =>
    fc.record({
      invocations: fc.constant(k),
      runners: fc.array(
        fc.record({
          invocation: fc.integer({ min: 0, max: k - 1 }),
          counted: fc.boolean(),
          calls: fc.integer({ min: 1, max: 2 }),
        }),
        { minLength: n, maxLength: n },
      ),
    }),
  );

/**
 * Plays a burst as the engine acts: each invocation, for each of its runners in turn, counts the
 * loss when its slice confirms it, then passes the breaker once per call of the rescue (the pass
 * counts the loss too when nothing has yet). Returns the calls that passed, by runner.
 */
async function play(burst: Burst, gate: BreakerGate): Promise<Map<string, number>> {
  const passed = new Map<string, number>();
  const at = T0 + 1_000;
  await Promise.all(
    Array.from({ length: burst.invocations }, async (_, i) => {
      const mine = burst.runners
        .map((r, index) => ({ ...r, runner: `${gate.cluster}/arc-runners/r${index}` }))
        .filter((r) => r.invocation === i);
      for (const r of mine) {
        if (r.counted) await store.countLoss({ ...gate, runner: r.runner, at: T0 }, WINDOW_MS, at);
        for (let c = 0; c < r.calls; c++)
          if ((await store.passBreaker(gate, { runner: r.runner, at: T0 }, at)).passed)
            passed.set(r.runner, (passed.get(r.runner) ?? 0) + 1);
      }
    }),
  );
  return passed;
}

const late = (gate: BreakerGate, at: number) =>
  store.passBreaker(gate, { runner: `${gate.cluster}/arc-runners/late`, at }, at);

export function describeBreakerBurstContract(
  name: string,
  open: () => Promise<BreakerStoreUnderTest>,
): void {
  describe(name, () => {
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(() => subject.close());

    describe('the circuit breaker under a burst of simultaneous losses, across concurrent invocations', () => {
      it.each([
        [50, 5],
        [200, 2],
        [1000, 1],
      ])(
        '%i losses: the runners acted on stay below the threshold, and a further one is held',
        async (n, runs) => {
          await fc.assert(
            fc.asyncProperty(burstOf(n), async (burst) => {
              const gate = freshGate();
              const passed = await play(burst, gate);
              // The threshold-th loss trips the breaker: no call passes for it or after it.
              expect(passed.size).toBeLessThan(LIMIT);
              expect((await late(gate, T0 + 2_000)).passed).toBe(false);
            }),
            { numRuns: runs, endOnFailure: true },
          );
        },
        120_000,
      );

      it('one call per rescue: the calls that pass are at most the limit', async () => {
        await fc.assert(
          fc.asyncProperty(burstOf(200), async (burst) => {
            const gate = freshGate();
            const single = { ...burst, runners: burst.runners.map((r) => ({ ...r, calls: 1 })) };
            const passed = await play(single, gate);
            const calls = [...passed.values()].reduce((a, b) => a + b, 0);
            expect(calls).toBeLessThanOrEqual(LIMIT);
          }),
          { numRuns: 2, endOnFailure: true },
        );
      }, 120_000);
    });

    describe('a breaker pass, one call at a time', () => {
      it('is held while the breaker is open, and passes once it has closed', async () => {
        const gate = freshGate();
        await store.openBreaker(gate.cluster, gate.scaleSet, T0, T0 + WINDOW_MS, T0);
        const held = await late(gate, T0 + 1_000);
        expect(held).toEqual({
          passed: false,
          why: expect.stringMatching(/^circuit breaker open on eks-\d+\/arc-linux until /),
          until: T0 + WINDOW_MS,
        });
        expect((await late(gate, T0 + WINDOW_MS)).passed).toBe(true);
      });

      it('counts losses in its window only, prunes older ones, and says when it lets calls by again', async () => {
        const gate = freshGate();
        for (let i = 0; i < LIMIT - 1; i++)
          await store.countLoss({ ...gate, runner: `old${i}`, at: T0 + i }, WINDOW_MS, T0 + i);
        // A call for no loss of its own passes while the count is below the threshold.
        expect((await store.passBreaker(gate, null, T0 + 100)).passed).toBe(true);
        // The threshold-th loss, the call's own, is held until the oldest leaves the window.
        expect(await late(gate, T0 + 100)).toEqual({
          passed: false,
          why: `circuit breaker open: ${LIMIT} losses in 900 s on ${gate.cluster}/arc-linux (threshold ${LIMIT})`,
          until: T0 + WINDOW_MS,
        });
        // Past the window the old losses no longer count, and the pass takes them out.
        const later = T0 + WINDOW_MS + 10_000;
        expect((await late(gate, later)).passed).toBe(true);
        const read = await store.readBreaker(gate.cluster, gate.scaleSet, later);
        expect(read.facts.breakers[0]?.losses).toEqual({
          [`${gate.cluster}/arc-runners/late`]: later,
        });
      });
    });
  });
}
