import { STUCK_AFTER_JOB_MS } from '../../../functions/domain/classify/classify-finished-runner.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, completedJob, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

const RUNNER = `${SET}-x7k2p-runner-bbbbb`;
const NEIGHBOURS = 12;

/**
 * A runner still up a minute after its job ended is stuck (actions-runner-controller#4603), and
 * nothing about it changes for the watch to see. Its finished job is what makes the sweep look:
 * the job's record is filed under the minute it finished, and the first sweep after the runner is
 * due decides its namespace from the followed objects. In a busy org every job finishes, so this
 * costs no timer and no write a job, and no list.
 */
describe('a runner that outlives its job is found by the sweep, with no timer a job', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  /** A job of `ids` ended now, as its webhook tells the store; returns when it ended. */
  async function jobEndsNow(ids: {
    jobId: number;
    runId: number;
    runnerId: number;
    runnerName: string;
  }): Promise<number> {
    const ended = harness.clock.now();
    const job = completedJob({
      ...ids,
      installationId: null,
      createdAt: ended - 300_000,
      startedAt: ended - 290_000,
      completedAt: ended,
    });
    await harness.engine.store.recordJob(job, ended);
    return ended;
  }

  it('stores no timer when the job ends, and the first sweep after it is due frees the runner', async () => {
    const { kube, clock } = harness;
    const set = seedRunnerSet(harness);
    const running = { phase: 'Running', ready: true } as const;
    for (let i = 0; i < NEIGHBOURS; i++)
      seedRunner(harness, set, `${SET}-x7k2p-runner-n${i}`, running, { withPod: true });
    seedRunner(harness, set, RUNNER, { ...running, runnerName: RUNNER }, { withPod: true });
    await runEngine({ kind: 'sweep' }, harness.engine);

    // Its job ends now (as the job's webhook tells the store); the runner is still up.
    const ended = await jobEndsNow({ jobId: 77, runId: 8, runnerId: 9, runnerName: RUNNER });
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
    const deletes = (from: number) =>
      kube.audit.requests
        .slice(from)
        .filter((r) => r.by === 'runner-medic' && r.verb === 'delete')
        .map((r) => r.path.split('/').pop());
    let from = kube.audit.requests.length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    expect(deletes(from)).toEqual([]);
    // No timer: the finished job is the record the sweep reads.
    expect(await harness.engine.store.dueWakes(ended + 3_600_000, 10)).toEqual([]);

    // Not yet due: a sweep still leaves it.
    clock.advance(STUCK_AFTER_JOB_MS - 20_000);
    from = kube.audit.requests.length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    expect(deletes(from)).toEqual([]);

    clock.advance(20_000);
    from = kube.audit.requests.length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    const calls = kube.audit.requests.slice(from).filter((r) => r.by === 'runner-medic');
    // Still up a minute after its job: the stuck runner is freed, from the followed objects.
    expect(deletes(from)).toEqual([RUNNER]);
    expect(calls.filter((r) => r.verb === 'list')).toEqual([]);
    expect(await harness.engine.store.dueWakes(ended + 3_600_000, 10)).toEqual([]);
  }, 120_000);

  it('frees it even when ARC never wrote the job into its EphemeralRunner: its jobs are read by its name', async () => {
    const { kube, clock } = harness;
    const set = harness.kube.api.get('ephemeralrunnersets', NS, `${SET}-x7k2p`) as Parameters<
      typeof seedRunner
    >[1];
    const runner = `${SET}-x7k2p-runner-ccccc`;
    seedRunner(
      harness,
      set,
      runner,
      { phase: 'Running', ready: true, runnerName: runner, runnerId: 11 },
      { withPod: true },
    );
    await runEngine({ kind: 'sweep' }, harness.engine);
    await jobEndsNow({ jobId: 78, runId: 9, runnerId: 11, runnerName: runner });
    clock.advance(STUCK_AFTER_JOB_MS);
    const from = kube.audit.requests.length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    const deletes = kube.audit.requests
      .slice(from)
      .filter((r) => r.by === 'runner-medic' && r.verb === 'delete')
      .map((r) => r.path.split('/').pop());
    expect(deletes).toEqual([runner]);
  }, 120_000);
});
