/**
 * `runner-medic rescue`: the second seed report's job (killed with its runner mid-job, the run
 * failed, and nobody re-ran it: runner-medic missed every event) rescued by hand through its job
 * URL, with the engine's own rules and guardrails, over the real adapters and the twins.
 */
import type { CliIo } from '../../functions/cli/main.js';
import { runCli } from '../../functions/cli/main.js';
import { parseRescueTarget, rescue } from '../../functions/cli/rescue.js';
import { NS, SET } from '../integration/engine/arc-objects.js';
import { EngineHarness } from '../integration/engine/engine-harness.js';
import { killedMidJob } from './worlds.js';

function jobUrl(harness: EngineHarness, runId: number, name: string): string {
  const job = harness.github.jobs(runId).find((j) => j.name === name);
  if (!job) throw new Error(`no job ${name}`);
  return `https://github.com/acme/app/actions/runs/${runId}/job/${job.id}`;
}

describe('parseRescueTarget', () => {
  it('reads job URLs, run URLs and cluster/namespace/runner; refuses anything else', () => {
    expect(parseRescueTarget('https://github.com/acme/app/actions/runs/12/job/34')).toEqual({
      kind: 'job',
      repo: 'acme/app',
      runId: 12,
      jobId: 34,
    });
    expect(parseRescueTarget('https://ghe.example/acme/app/actions/runs/12/attempts/2')).toEqual({
      kind: 'run',
      repo: 'acme/app',
      runId: 12,
    });
    expect(parseRescueTarget('prod-eu/arc-runners/arc-linux-x7k2p-runner-aaaaa')).toEqual({
      kind: 'runner',
      cluster: 'prod-eu',
      namespace: 'arc-runners',
      name: 'arc-linux-x7k2p-runner-aaaaa',
    });
    expect(parseRescueTarget('https://github.com/acme/app/pull/3')).toMatch(/^not a job URL/);
    expect(parseRescueTarget('prod/Bad_Namespace/x')).toMatch(/^not a job URL/);
  });
});

describe('rescue a job killed with its runner, that runner-medic never heard of', () => {
  const harness = new EngineHarness();
  let runId = 0;
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
    ({ runId } = await killedMidJob(harness));
    expect(harness.github.run(runId)).toMatchObject({ status: 'completed', attempt: 1 });
  });
  afterAll(() => harness.stop());

  it('without --yes: says it would re-run the job and why, and does nothing', async () => {
    const out = await rescue(
      { kind: 'job', repo: 'acme/app', runId, jobId: jobOf(harness, runId, 'build') },
      { yes: false },
      harness.engine,
    );
    expect(out.refused).toBeNull();
    expect(out.would).toEqual([
      expect.objectContaining({ kind: 'rerun-failed-jobs', rule: 'rule-3-rerun-killed-job' }),
    ]);
    expect(out.did).toBeNull();
    expect(harness.medicGithubCalls()).toEqual([]);
    expect(harness.github.run(runId)?.attempt).toBe(1);
  });

  it('through its run URL: the same decision, in JSON', async () => {
    const lines: string[] = [];
    const io: CliIo = { env: {}, out: (t) => void lines.push(t), err: (t) => void lines.push(t) };
    const code = await runCli(
      ['rescue', `https://github.com/acme/app/actions/runs/${runId}`, '--json'],
      io,
      { engine: async () => harness.engine },
    );
    expect(code).toBe(0);
    const out = JSON.parse(lines.join('')) as { would: { kind: string }[]; did: unknown };
    // The run's every job and runner: `lint`'s runner, left up after its job, is freed too.
    expect(out.would.map((a) => a.kind).sort()).toEqual([
      'delete-ephemeral-runner',
      'rerun-failed-jobs',
    ]);
    expect(out.did).toBeNull();
    expect(harness.medicGithubCalls()).toEqual([]);
  });

  it('with --yes, through the command line: re-runs it once, and the job recovers', async () => {
    const lines: string[] = [];
    const io: CliIo = { env: {}, out: (t) => void lines.push(t), err: (t) => void lines.push(t) };
    const code = await runCli(['rescue', jobUrl(harness, runId, 'build'), '--yes'], io, {
      engine: async () => harness.engine,
    });
    expect(lines.join('')).toContain('did: rerun-failed-jobs: succeeded');
    expect(code).toBe(0);
    expect(harness.medicGithubCalls().map((c) => c.verb)).toEqual(['rerun-failed-jobs']);
    expect(harness.github.run(runId)?.attempt).toBe(2);
    // A fresh runner of the scale set takes the re-run job (ARC's part, played by hand here).
    const scaleSetId = harness.github.actions.registerScaleSet({ owner: 'acme', name: SET });
    harness.github.actions.registerRunner(scaleSetId, `${SET}-x7k2p-runner-ccccc`);
    harness.github.actions.acquireJob(`${SET}-x7k2p-runner-ccccc`);
    await harness.clock.advance(600_000);
    const build = harness.github.jobs(runId).find((j) => j.name === 'build');
    expect(build).toMatchObject({ status: 'completed', conclusion: 'success' });

    // Asked again: it was done; nothing more to do, and no second call.
    const again = await runCli(['rescue', jobUrl(harness, runId, 'build'), '--yes'], io, {
      engine: async () => harness.engine,
    });
    expect(again).toBe(1);
    expect(harness.medicGithubCalls()).toHaveLength(1);
  });
});

describe('rescue refuses with the guardrail’s reason', () => {
  it('over the re-run budget', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ allow: { namespaces: [NS] }, rules: { rerunKilledJob: { budget: 0 } } });
      const { runId } = await killedMidJob(harness);
      const lines: string[] = [];
      const code = await runCli(
        ['rescue', jobUrl(harness, runId, 'build'), '--yes'],
        { env: {}, out: (t) => void lines.push(t), err: (t) => void lines.push(t) },
        { engine: async () => harness.engine },
      );
      expect(code).toBe(1);
      expect(lines.join('')).toMatch(/refused: held by a guardrail: re-run budget of 0 exhausted/);
      expect(harness.medicGithubCalls()).toEqual([]);
    } finally {
      await harness.stop();
    }
  });

  it('while the circuit breaker of the cluster is open', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ allow: { namespaces: [NS] } });
      const { runId } = await killedMidJob(harness);
      const now = harness.clock.now();
      await harness.store.openBreaker('prod-eu', null, now, now + 600_000, now);
      const out = await rescue(
        { kind: 'job', repo: 'acme/app', runId, jobId: jobOf(harness, runId, 'build') },
        { yes: true },
        harness.engine,
      );
      expect(out.refused).toMatch(/held by a guardrail: circuit breaker open/);
      expect(harness.medicGithubCalls()).toEqual([]);
    } finally {
      await harness.stop();
    }
  });

  it('outside the allowlist', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ allow: { namespaces: ['elsewhere'] } });
      const { runId } = await killedMidJob(harness);
      const out = await rescue(
        { kind: 'job', repo: 'acme/app', runId, jobId: jobOf(harness, runId, 'build') },
        { yes: true },
        harness.engine,
      );
      expect(out.refused).toMatch(/namespace prod-eu\/arc-runners is not in allow.namespaces/);
      expect(out.did).toBeNull();
      expect(harness.medicGithubCalls()).toEqual([]);
    } finally {
      await harness.stop();
    }
  });
});

function jobOf(harness: EngineHarness, runId: number, name: string): number {
  return harness.github.jobs(runId).find((j) => j.name === name)?.id ?? 0;
}
