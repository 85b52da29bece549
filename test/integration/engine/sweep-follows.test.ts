import { runEngine } from '../../../functions/engine/run-engine.js';
import { FULL_RELIST_MS } from '../../../functions/engine/sweep.js';
import type { EngineDeps } from '../../../functions/engine/engine-deps.js';
import { NS, SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

/**
 * The sweep follows the cluster's runners: it lists them once, then resumes watches from the
 * resourceVersions it keeps in the store, in this container and in the next one, and lists in
 * full again only at its slow cadence. Counted from the Kubernetes twin's request log.
 */
describe('the sweep lists once, then follows changes from its stored cursor', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
    const set = seedRunnerSet(harness);
    for (const id of ['aaaaa', 'bbbbb', 'ccccc'])
      seedRunner(
        harness,
        set,
        `${SET}-x7k2p-runner-${id}`,
        { phase: 'Running' },
        { withPod: true },
      );
  });
  afterAll(() => harness.stop());

  /** runner-medic's reads of runners since `from`: lists, watches, objects. */
  const runnerReads = (from: number) => {
    const rs = harness.kube.audit.requests
      .slice(from)
      .filter((r) => r.by === 'runner-medic')
      .filter((r) => /\/(pods|ephemeralrunners)(\?|$)/.test(r.path));
    return {
      lists: rs.filter((r) => r.verb === 'list').length,
      watches: rs.filter((r) => r.verb === 'watch').length,
      objects: rs.reduce((n, r) => n + (r.objects ?? 0), 0),
    };
  };
  const sweep = async (deps: EngineDeps) => {
    const from = harness.kube.audit.requests.length;
    await runEngine({ kind: 'sweep' }, deps);
    await harness.clock.advance(60_000);
    return runnerReads(from);
  };

  it('lists on its first sweep, and watches on the next, here and in a new container', async () => {
    const first = await sweep(harness.engine);
    expect(first.lists).toBe(2);
    expect(first.objects).toBe(6);

    expect(await sweep(harness.engine)).toEqual({ lists: 0, watches: 2, objects: 0 });

    // A change, then a new container (its own store client, so nothing in memory): it resumes
    // the watch from the stored cursor and sees the change, then lists the scope it never listed.
    harness.kube.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      `${SET}-x7k2p-runner-aaaaa`,
      (o) => void (o.metadata.labels = { ...o.metadata.labels, touched: 'yes' }),
    );
    const next: EngineDeps = { ...harness.engine, store: harness.store };
    expect(await sweep(next)).toEqual({ lists: 2, watches: 2, objects: 1 + 6 });
    expect(await sweep(next)).toEqual({ lists: 0, watches: 2, objects: 0 });

    // The slow cadence: every scope is listed again, once an hour.
    await harness.clock.advance(FULL_RELIST_MS);
    expect((await sweep(next)).lists).toBe(2);
  }, 120_000);
});
