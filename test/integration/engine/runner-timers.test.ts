import { STUCK_AFTER_JOB_MS } from '../../../functions/domain/classify/classify-finished-runner.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, completedJob, seedRunner, seedRunnerSet } from './arc-objects.js';
import { CLUSTER, EngineHarness } from './engine-harness.js';

const RUNNER = `${SET}-x7k2p-runner-bbbbb`;
const NEIGHBOURS = 12;

/**
 * The sweep decides a namespace as a whole, but a timer that is one runner's (its job just ended:
 * is it stuck then?) wakes that runner alone: its pod and EphemeralRunner are read by GET, and the
 * namespace is not listed again. In a busy org every finished job sets such a timer, so listing
 * its namespace would cost the namespace's size once a job.
 */
describe("a runner's own timer wakes that runner, not its namespace", () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('sets the timer for the runner, and its wake frees it reading only its own objects', async () => {
    const { kube, clock } = harness;
    const set = seedRunnerSet(harness);
    const running = { phase: 'Running', ready: true } as const;
    for (let i = 0; i < NEIGHBOURS; i++)
      seedRunner(harness, set, `${SET}-x7k2p-runner-n${i}`, running, { withPod: true });
    seedRunner(harness, set, RUNNER, { ...running, runnerName: RUNNER }, { withPod: true });
    await runEngine({ kind: 'sweep' }, harness.engine);

    // Its job ends now (as the job's webhook tells the store); the runner is still up.
    const ended = clock.now();
    await harness.engine.store.recordJob(
      completedJob({
        jobId: 77,
        runId: 8,
        runnerId: 9,
        runnerName: RUNNER,
        installationId: null,
        createdAt: ended - 300_000,
        startedAt: ended - 290_000,
        completedAt: ended,
      }),
      ended,
    );
    // ARC marks the EphemeralRunner: a change that makes the sweep decide the namespace.
    kube.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      RUNNER,
      (o) => void (o.status = { ...(o.status as object), jobId: 'job-77', workflowRunId: 8 }),
      { subresource: 'status' },
    );
    clock.advance(10_000);
    await runEngine({ kind: 'sweep' }, harness.engine);

    const due = await harness.engine.store.dueWakes(ended + STUCK_AFTER_JOB_MS, 10);
    expect(due.map((w) => [w.at, w.subjects])).toEqual([
      [ended + STUCK_AFTER_JOB_MS, [`runner|${CLUSTER}|${NS}|${RUNNER}`]],
    ]);

    clock.advance(STUCK_AFTER_JOB_MS);
    const from = kube.audit.requests.length;
    await runEngine({ kind: 'wake' }, harness.engine);
    const calls = kube.audit.requests.slice(from).filter((r) => r.by === 'runner-medic');
    const reads = calls.filter((r) => ['get', 'list', 'watch'].includes(r.verb));
    // Still up a while after its job: the stuck runner is freed, from its own slice.
    expect(calls.filter((r) => r.verb === 'delete').map((r) => r.path.split('/').pop())).toEqual([
      RUNNER,
    ]);
    // A node is read by a list of one name (RBAC grants list on nodes); nothing is listed whole.
    const byName = (path: string) => path.includes('fieldSelector=metadata.name');
    expect(reads.filter((r) => r.verb !== 'get' && !byName(r.path))).toEqual([]);
    expect(
      reads.filter((r) => r.verb === 'get').map((r) => r.path.split('/').slice(-2).join('/')),
    ).toEqual(expect.arrayContaining([`ephemeralrunners/${RUNNER}`, `pods/${RUNNER}`]));
    expect(reads.reduce((n, r) => n + (r.objects ?? 0), 0)).toBeLessThanOrEqual(3);
  }, 120_000);
});
