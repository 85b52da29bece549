import { runEngine, type EngineReport } from '../../../functions/engine/run-engine.js';
import { SWEEP_RESERVE_MS } from '../../../functions/engine/sweep.js';
import { ScaleWorld, namespaceName, runnerName } from '../../bench/scale-world.js';

/**
 * A sweep of 2,000 EphemeralRunners in 100 namespaces cut off mid-way by a short remaining time
 * stops cleanly, keeps the namespaces it has not decided pending, and the next sweep decides
 * them: together they reach the same decisions as one uncut sweep of an identical world. (The cut falls between
 * namespaces, so 20 runners a namespace test it as well as 100; SWEEP_RESUME_RUNNERS=10000 plays
 * the larger world, about 3 minutes of CPU more.)
 */
const SIZE = {
  ephemeralRunners: Number(process.env.SWEEP_RESUME_RUNNERS ?? 2_000),
  storedJobs: 0,
  clusters: 2,
  namespaces: 100,
};
/** Every 97th runner's EphemeralRunner failed (ARC gave up on its pod): rule 1 deletes it. */
const FAILED = Array.from({ length: SIZE.ephemeralRunners }, (_, r) => r).filter(
  (r) => r % 97 === 5,
);

async function worldWithFailures(): Promise<ScaleWorld> {
  const world = new ScaleWorld(SIZE);
  await world.start();
  await world.populate();
  for (const r of FAILED) world.failRunner(r);
  return world;
}

const deleted = (world: ScaleWorld) =>
  world.kubes
    .flatMap((k) => k.audit.entries)
    .filter((e) => e.by === 'runner-medic' && e.verb === 'delete')
    .map((e) => `${e.namespace}/${e.name}`)
    .sort();

describe('a sweep cut off by the remaining time resumes where it stopped', () => {
  it('reaches the same decisions as an uncut sweep', async () => {
    const uncut = await worldWithFailures();
    await runEngine({ kind: 'sweep' }, uncut.deps);
    const expected = deleted(uncut);
    await uncut.stop();
    expect(expected).toEqual(
      FAILED.map(
        (r) => `${namespaceName(r % 100)}/${runnerName(r % 100, Math.floor(r / 100))}`,
      ).sort(),
    );

    const cut = await worldWithFailures();
    // The invocation's clock: plenty of time for the first deletions, then it runs short.
    cut.deps.remainingTimeMs = () => (deleted(cut).length >= 3 ? SWEEP_RESERVE_MS - 1 : 100_000);
    const first: EngineReport = await runEngine({ kind: 'sweep' }, cut.deps);
    const afterFirst = deleted(cut);
    expect(afterFirst.length).toBeGreaterThan(0);
    expect(afterFirst.length).toBeLessThan(expected.length);
    expect(first.actions.length).toBe(afterFirst.length);
    expect(await cut.store.sweepCursor('cluster-0')).not.toBeNull();

    cut.deps.remainingTimeMs = () => 100_000;
    await runEngine({ kind: 'sweep' }, cut.deps);
    await runEngine({ kind: 'sweep' }, cut.deps);
    expect(deleted(cut)).toEqual(expected);
    await cut.stop();
  }, 1_800_000);
});
