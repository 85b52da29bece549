import { rerunKilledJob } from '../../../functions/domain/decide/rules/rerun-killed-job.js';
import { idempotencyKey, subKey } from '../../../functions/domain/model/idempotency-key.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import type { EngineReport } from '../../../functions/engine/run-engine.js';
import { NS, SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';
import { observe } from './observations.js';

/** Two jobs of one run on two runners; the first runner gets SIGTERM mid-job (the second seed). */
async function killedMidJob(harness: EngineHarness, failsOnItsOwn: boolean) {
  const { github, clock } = harness;
  github.createOrg('acme');
  github.createRepo('acme/app');
  const installationId = github.createInstallation('acme');
  github.defineWorkflow('acme/app', {
    name: 'ci',
    jobs: [
      {
        name: 'build',
        runsOn: SET,
        durationMs: 300_000,
        ...(failsOnItsOwn ? { fails: { afterMs: 60_000 } } : {}),
      },
      { name: 'lint', runsOn: SET, durationMs: 240_000 },
    ],
  });
  const set = seedRunnerSet(harness);
  const observations = observe(github, installationId);
  const scaleSetId = github.actions.registerScaleSet({ owner: 'acme', name: SET });
  github.actions.registerRunner(scaleSetId, `${SET}-x7k2p-runner-aaaaa`);
  github.actions.registerRunner(scaleSetId, `${SET}-x7k2p-runner-bbbbb`);
  const { runId } = github.triggerRun('acme/app', 'ci');
  await clock.advance(1000);
  github.actions.acquireJob(`${SET}-x7k2p-runner-aaaaa`);
  github.actions.acquireJob(`${SET}-x7k2p-runner-bbbbb`);
  for (const [suffix, displayName] of [
    ['aaaaa', 'build'],
    ['bbbbb', 'lint'],
  ] as const) {
    const name = `${SET}-x7k2p-runner-${suffix}`;
    seedRunner(
      harness,
      set,
      name,
      {
        phase: 'Running',
        ready: true,
        runnerName: name,
        jobRepositoryName: 'acme/app',
        workflowRunId: runId,
        jobDisplayName: displayName,
        jobId: `guid-${name}`,
      },
      { withPod: true },
    );
  }
  // The first sweep learns where the scale set's runners live.
  await runEngine({ kind: 'sweep' }, harness.engine);
  await clock.advance(120_000);
  await feed(harness, observations, 0);
  const seen = observations.length;
  if (!failsOnItsOwn) {
    github.actions.runnerStopped(`${SET}-x7k2p-runner-aaaaa`, 'sigterm');
    // The pod is gone, and ARC >= 0.13 deletes the EphemeralRunner of a runner that failed with a job.
    harness.kube.api.delete('kubelet', 'pods', NS, `${SET}-x7k2p-runner-aaaaa`);
    harness.kube.api.delete('arc', 'ephemeralrunners', NS, `${SET}-x7k2p-runner-aaaaa`);
  }
  return { runId, observations, seen };
}

/** What an invocation writes before calling GitHub: the claim of the re-run, with no result yet. */
async function claimRerun(harness: EngineHarness, key: string, runId: number) {
  await harness.engine.store.claimAction(
    {
      key,
      rule: rerunKilledJob.id,
      target: {
        kind: 'rerun-failed-jobs',
        repo: 'acme/app',
        installationId: null,
        runId,
        runAttempt: 1,
        jobIds: [],
      },
      scope: {
        cluster: null,
        namespace: NS,
        scaleSet: SET,
        repo: 'acme/app',
        runnerName: null,
        jobUrl: null,
      },
      cause: null,
      signal: null,
      reason: 'test: claimed before a crash',
      dryRun: false,
      budgetKeys: [],
    },
    harness.clock.now(),
    120_000,
  );
}

async function feed(
  harness: EngineHarness,
  observations: ReturnType<typeof observe>,
  from: number,
) {
  const reports: EngineReport[] = [];
  for (const observation of observations.slice(from)) {
    reports.push(await runEngine({ kind: 'observation', observation }, harness.engine));
  }
  return reports;
}

describe('engine, rule 3: a job killed mid-run is re-run once the run completes', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('waits for the run, then re-runs the failed job with one call, exactly once', async () => {
    const { runId, observations, seen: started } = await killedMidJob(harness, false);
    const early = await feed(harness, observations, started);
    expect(harness.medicGithubCalls()).toEqual([]);
    expect(early.flatMap((r) => r.actions).map((a) => a.kind)).toContain('await-run-completion');

    const seen = observations.length;
    await harness.clock.advance(300_000);
    expect(harness.github.run(runId)?.status).toBe('completed');
    await feed(harness, observations, seen);
    await feed(harness, observations, seen);

    expect(harness.medicGithubCalls().map((c) => [c.verb, c.target, c.status])).toEqual([
      ['rerun-failed-jobs', `repos/acme/app/actions/runs/${runId}`, 201],
    ]);
    expect(harness.github.run(runId)?.attempt).toBe(2);
    expect(harness.remediationEvents()).toContainEqual(
      expect.objectContaining({ action: 'rerun-failed-jobs', outcome: 'succeeded', dryRun: false }),
    );
    const lossToAction = harness.metrics.filter((m) => m.name === 'LossToAction');
    expect(lossToAction).toHaveLength(1);
    // Lost at 121 s (SIGTERM), re-run when the run completed, 300 s of simulated time later.
    expect(lossToAction[0]?.value).toBe(300_000);
  });
});

describe('engine, rule 3: a genuine failure is never re-run', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('reads the annotations, finds no runner-loss signal, and calls nothing', async () => {
    const { runId, observations, seen } = await killedMidJob(harness, true);
    await harness.clock.advance(400_000);
    expect(harness.github.run(runId)?.conclusion).toBe('failure');
    await feed(harness, observations, seen);

    expect(harness.medicGithubCalls()).toEqual([]);
    expect(harness.github.run(runId)?.attempt).toBe(1);
  });
});

describe('engine, global dry run', () => {
  const harness = new EngineHarness();
  beforeAll(() => harness.start());
  afterAll(() => harness.stop());

  it('makes no mutating call and still emits what it would have done', async () => {
    harness.usePolicy({ dryRun: true, allow: { namespaces: [NS] } });
    const { runId, observations, seen } = await killedMidJob(harness, false);
    await harness.clock.advance(300_000);
    await feed(harness, observations, seen);

    expect(harness.medicGithubCalls()).toEqual([]);
    expect(harness.github.run(runId)?.attempt).toBe(1);
    expect(harness.remediationEvents()).toContainEqual(
      expect.objectContaining({ action: 'rerun-failed-jobs', outcome: 'dry-run', dryRun: true }),
    );
  });
});

describe('engine, a crash between claiming a re-run and recording its result', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('re-checks the run before repeating: the re-run happened, so it is not made again', async () => {
    const { runId, observations, seen } = await killedMidJob(harness, false);
    await harness.clock.advance(300_000);
    expect(harness.github.run(runId)?.status).toBe('completed');

    // The invocation claimed the re-run, GitHub accepted it, and then the Lambda died.
    const key = subKey(idempotencyKey('rerun', 'acme/app', runId, 1), 'try', 0);
    await claimRerun(harness, key, runId);
    expect(harness.github.rerunFailedJobs(runId, 'runner-medic').status).toBe(201);
    await harness.clock.advance(180_000);

    await runEngine({ kind: 'sweep' }, harness.engine);
    await feed(harness, observations, seen);

    expect(harness.github.run(runId)?.attempt).toBe(2);
    expect(harness.medicGithubCalls().map((c) => c.verb)).toEqual(['rerun-failed-jobs']);
    const record = (await harness.store.scanAll(harness.clock.now())).actions.find(
      (a) => a.key === key,
    );
    expect(record).toMatchObject({
      outcome: 'succeeded',
      detail: 'result lost; re-checked: the effect is in place',
    });
    // The dead invocation's audit event is told by the sweep that re-checked it, once.
    const told = harness.remediationEvents().filter((e) => e.key === key);
    expect(told).toEqual([
      expect.objectContaining({
        action: 'rerun-failed-jobs',
        outcome: 'succeeded',
        outcomeDetail: 'result lost; re-checked: the effect is in place',
        reason: 'test: claimed before a crash',
      }),
    ]);
  });
});

describe('engine, a crash after claiming a re-run but before calling GitHub', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('finds the effect missing, marks the claim failed, and the rule re-runs once under a new key', async () => {
    const { runId, observations, seen } = await killedMidJob(harness, false);
    await harness.clock.advance(300_000);
    const key = subKey(idempotencyKey('rerun', 'acme/app', runId, 1), 'try', 0);
    await claimRerun(harness, key, runId);
    await harness.clock.advance(180_000);

    await runEngine({ kind: 'sweep' }, harness.engine);
    const waiting = await feed(harness, observations, seen);
    expect(harness.medicGithubCalls()).toEqual([]);
    const wakeAt = waiting[waiting.length - 1]?.wakeAt ?? 0;
    expect(wakeAt).toBeGreaterThan(harness.clock.now());
    await harness.clock.advanceTo(wakeAt);
    await runEngine({ kind: 'wake' }, harness.engine);

    expect(harness.github.run(runId)?.attempt).toBe(2);
    expect(harness.medicGithubCalls().map((c) => [c.verb, c.status])).toEqual([
      ['rerun-failed-jobs', 201],
    ]);
    const actions = (await harness.store.scanAll(harness.clock.now())).actions;
    expect(actions.find((a) => a.key === key)?.outcome).toBe('failed');
    expect(
      actions.find((a) => a.key === subKey(idempotencyKey('rerun', 'acme/app', runId, 1), 'try', 1))
        ?.outcome,
    ).toBe('succeeded');
  });
});

describe('engine, an installation that is gone or forged', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('fails only that org’s needs, reports it, and never makes a later run throw', async () => {
    const { observations, seen } = await killedMidJob(harness, false);
    await harness.clock.advance(300_000);
    // Events carrying an installation id GitHub does not know (uninstalled, or a forged event).
    const forged = observations.slice(seen).map((o) => ({ ...o, installationId: 987_654 }));
    for (const observation of forged)
      await expect(
        runEngine({ kind: 'observation', observation }, harness.engine),
      ).resolves.toBeDefined();
    expect(harness.metrics.map((m) => [m.name, m.dimensions])).toContainEqual([
      'InstallationUnavailable',
      { org: 'acme' },
    ]);
    expect(harness.medicGithubCalls()).toEqual([]);
    await harness.clock.advance(600_000);
    await expect(runEngine({ kind: 'sweep' }, harness.engine)).resolves.toBeDefined();
    await expect(runEngine({ kind: 'wake' }, harness.engine)).resolves.toBeDefined();
  });
});

describe('engine, a re-run whose answer is a 5xx that did not take effect', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('records it as unknown and warns with the run and attempt to look at', async () => {
    const { runId, observations, seen } = await killedMidJob(harness, false);
    await harness.clock.advance(300_000);
    harness.github.addFault({
      kind: 'server-error',
      status: 500,
      times: 1,
      path: `/repos/acme/app/actions/runs/${runId}/rerun-failed-jobs`,
    });
    await feed(harness, observations, seen);
    const warned = harness.logs.filter(
      (l) => l.level === 'warn' && l.message === 'remediation',
    ) as { fields?: Record<string, unknown> }[];
    expect(warned.map((l) => l.fields)).toContainEqual(
      expect.objectContaining({
        outcome: 'unknown',
        kind: 'rerun-failed-jobs',
        repo: 'acme/app',
        runId,
        runAttempt: 1,
      }),
    );
    expect(harness.github.run(runId)?.attempt).toBe(1);
  });
});
