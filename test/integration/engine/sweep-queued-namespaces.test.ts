import { runEngine } from '../../../functions/engine/run-engine.js';
import { ScaleWorld, namespaceName, runnerName } from '../../bench/scale-world.js';

/**
 * A job queued a while waits on its scale set: the sweep decides that scale set's namespaces
 * while it waits (rule 2). A job queued a few seconds, as nearly every job is at some sweep,
 * decides none: with one scale set across many namespaces it decided them all, every sweep.
 */
const world = new ScaleWorld({ ephemeralRunners: 40, storedJobs: 0, clusters: 1, namespaces: 8 });
/** The namespaces a sweep decided: each one read from the store by its namespace key. */
const decided = () =>
  new Set(world.meter.queried.filter((k) => k.startsWith('NS#')).map((k) => k.split('/')[1]));

beforeAll(async () => {
  await world.start();
  await world.populate();
  await runEngine({ kind: 'sweep' }, world.deps);
}, 120_000);
afterAll(() => world.stop());

describe('the namespaces a queued job makes the sweep decide', () => {
  it('a job queued seconds ago decides no namespace, nor joins one decided for a change', async () => {
    world.clock.advance(60_000);
    await world.queueJob(5_000_001, 10_000);
    // ARC touches a runner of one namespace: that namespace alone is decided.
    (world.kubes[0] as (typeof world.kubes)[number]).api.modify(
      'arc',
      'ephemeralrunners',
      namespaceName(0),
      runnerName(0, 0),
      (o) => void (o.metadata.annotations = { touched: 'yes' }),
    );
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(decided()).toEqual(new Set([namespaceName(0)]));
    // Its webhooks decide the job (their timers wake the job alone): the namespace's slice
    // set no starvation timer that would list the namespace.
    const timers = await world.store.dueWakes(world.clock.now() + 3_600_000, 100);
    expect(timers.flatMap((t) => t.subjects).filter((s) => s.startsWith('namespace|'))).toEqual([]);
  }, 60_000);

  it('a job queued a minute decides every namespace of its scale set', async () => {
    world.clock.advance(60_000);
    world.meter.reset();
    await runEngine({ kind: 'sweep' }, world.deps);
    expect(decided()).toEqual(new Set(world.namespacesOf(0)));
  }, 60_000);
});
