/**
 * An explanation on every job runner-medic touches: a `runner-medic` check run on the run's
 * commit, created exactly once per action (even across a crash), none in dry run. Real octokit
 * against the GitHub twin, whose Checks API is checked against GitHub's OpenAPI description.
 */
import { Octokit } from '@octokit/core';
import { OctokitCheckRunPublisher } from '../../functions/adapters/github/check-run-publisher.js';
import { engineFromEnvironment } from '../../functions/config/compose-engine.js';
import { composeExplanation } from '../../functions/domain/decide/explanation.js';
import type { EngineDeps } from '../../functions/engine/engine-deps.js';
import type { EngineReport } from '../../functions/engine/run-engine.js';
import { runEngine } from '../../functions/engine/run-engine.js';
import { publishOutbox } from '../../functions/engine/sweep.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { checkRunsOf } from '../../sim/github/rest/check-run-routes.js';
import {
  APP_PERMISSIONS,
  setInstallationPermissions,
} from '../../sim/github/rest/installation-permissions.js';
import { NS, SET } from '../integration/engine/arc-objects.js';
import { EngineHarness } from '../integration/engine/engine-harness.js';
import type { observe } from '../integration/engine/observations.js';
import { responseValidator } from '../sim/github/openapi-check.js';
import { killedMidJob } from './worlds.js';

function publisherFor(github: GitHubSim): OctokitCheckRunPublisher {
  return new OctokitCheckRunPublisher({
    baseUrl: github.baseUrl,
    appId: github.app.appId,
    privateKey: github.app.privateKey,
    remainingTimeMs: () => 60_000,
    writeSpacingMs: 0,
    retryBaseMs: 0,
    rateLimitSecondMs: 0,
  });
}

function expectValid(path: string, method: 'get' | 'post', status: number, body: unknown) {
  const validate = responseValidator(path, method, status);
  if (!validate) throw new Error(`GitHub's description has no ${method} ${path} ${status}`);
  const valid = validate(body);
  expect(validate.errors ?? []).toEqual([]);
  expect(valid).toBe(true);
}

describe('the GitHub twin: check runs, as GitHub describes them', () => {
  const clock = new SimClock(Date.parse('2026-03-02T09:00:00Z'));
  const github = new GitHubSim({ clock, seed: 21 });
  let installationId = 0;
  let runId = 0;
  let sha = '';
  let asApp: Octokit;
  beforeAll(async () => {
    await github.start();
    github.createOrg('acme');
    github.createRepo('acme/app');
    installationId = github.createInstallation('acme');
    github.defineWorkflow('acme/app', {
      name: 'ci',
      jobs: [{ name: 'build', runsOn: 'arc', durationMs: 1000 }],
    });
    runId = github.triggerRun('acme/app', 'ci').runId;
    sha = github.run(runId)?.headSha ?? '';
    asApp = new Octokit({
      baseUrl: github.baseUrl,
      auth: github.issueInstallationToken(installationId),
    });
  });
  afterAll(() => github.stop());

  const create = (body: Record<string, unknown>) =>
    asApp.request('POST /repos/{owner}/{repo}/check-runs', {
      owner: 'acme',
      repo: 'app',
      name: 'runner-medic',
      head_sha: sha,
      ...body,
    });

  it('creates, reads and lists check runs in the documented shapes', async () => {
    const created = await create({
      external_id: 'key-1',
      status: 'completed',
      conclusion: 'neutral',
      output: { title: 'Re-ran build', summary: 'why' },
    });
    expect(created.status).toBe(201);
    expectValid('/repos/{owner}/{repo}/check-runs', 'post', 201, created.data);
    const one = await asApp.request('GET /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      owner: 'acme',
      repo: 'app',
      check_run_id: created.data.id,
    });
    expectValid('/repos/{owner}/{repo}/check-runs/{check_run_id}', 'get', 200, one.data);
    expect(one.data).toMatchObject({
      name: 'runner-medic',
      head_sha: sha,
      external_id: 'key-1',
      status: 'completed',
      conclusion: 'neutral',
      output: { title: 'Re-ran build', summary: 'why' },
    });
    const list = await asApp.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
      owner: 'acme',
      repo: 'app',
      ref: sha,
    });
    expectValid('/repos/{owner}/{repo}/commits/{ref}/check-runs', 'get', 200, list.data);
    expect(list.data.total_count).toBe(1);
  });

  it('lists only the newest check run of a name unless filter=all (GitHub’s default)', async () => {
    await create({ external_id: 'key-2', status: 'completed', conclusion: 'neutral' });
    const list = (filter?: 'all') =>
      asApp.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
        owner: 'acme',
        repo: 'app',
        ref: sha,
        check_name: 'runner-medic',
        ...(filter ? { filter } : {}),
      });
    expect((await list()).data.check_runs.map((r) => r.external_id)).toEqual(['key-2']);
    expect((await list('all')).data.check_runs.map((r) => r.external_id)).toEqual([
      'key-2',
      'key-1',
    ]);
  });

  it('refuses what GitHub refuses: no conclusion when completed, an unknown commit', async () => {
    await expect(create({ status: 'completed' })).rejects.toMatchObject({ status: 422 });
    await expect(
      create({ head_sha: 'f'.repeat(40), status: 'completed', conclusion: 'neutral' }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('refuses an installation that has not accepted checks: write, and a person’s token', async () => {
    setInstallationPermissions(github.app, 'acme', { ...APP_PERMISSIONS, checks: 'read' });
    try {
      const refused = create({ status: 'completed', conclusion: 'neutral' });
      await expect(refused).rejects.toMatchObject({
        status: 403,
        message: expect.stringContaining('Resource not accessible by integration'),
      });
      const asPerson = new Octokit({ baseUrl: github.baseUrl, auth: github.issueUserToken() });
      await expect(
        asPerson.request('POST /repos/{owner}/{repo}/check-runs', {
          owner: 'acme',
          repo: 'app',
          name: 'runner-medic',
          head_sha: sha,
        }),
      ).rejects.toMatchObject({ status: 403 });
    } finally {
      setInstallationPermissions(github.app, 'acme', APP_PERMISSIONS);
    }
  });

  it('lists the installation’s repositories (GET /installation/repositories), as described', async () => {
    github.createRepo('acme/lib');
    const list = await asApp.request('GET /installation/repositories', { per_page: 1 });
    expectValid('/installation/repositories', 'get', 200, list.data);
    expect(list.data.total_count).toBe(2);
    expect(list.data.repositories.map((r) => r.full_name)).toEqual(['acme/app']);
    expect(String(list.headers.link)).toContain('rel="next"');
  });

  it('the publisher creates a check run once per external id, found again by it', async () => {
    const publisher = publisherFor(github);
    const ref = { repo: 'acme/app', installationId: null };
    const head = await publisher.runHead(ref, runId);
    expect(head?.headSha).toBe(sha);
    const request = {
      ref,
      headSha: sha,
      externalId: 'action-key-3',
      title: 't',
      summary: 's',
      detailsUrl: head?.htmlUrl ?? '',
      completedAt: clock.now(),
    };
    const first = await publisher.publish(request);
    const again = await publisher.publish(request);
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    expect(checkRunsOf(github.app).filter((r) => r.externalId === 'action-key-3')).toHaveLength(1);
    expect(await publisher.runHead(ref, 999_999_999)).toBeNull();
  });
});

describe('CHECK_RUNS', () => {
  const env = {
    TABLE_NAME: 'runner-medic',
    GITHUB_APP_CREDENTIALS: JSON.stringify({
      appId: 1,
      privateKey: '-----BEGIN RSA PRIVATE KEY-----\nkey\n-----END RSA PRIVATE KEY-----',
    }),
  };
  const composed = async (extra: Record<string, string>) =>
    (await engineFromEnvironment({ ...env, ...extra })(() => 60_000)).deps.checkRuns;

  it('is on unless set to off, and refuses any other value', async () => {
    expect(await composed({})).toBeInstanceOf(OctokitCheckRunPublisher);
    expect(await composed({ CHECK_RUNS: 'on' })).toBeDefined();
    expect(await composed({ CHECK_RUNS: 'off' })).toBeUndefined();
    await expect(composed({ CHECK_RUNS: 'no' })).rejects.toThrow(/CHECK_RUNS: "on" or "off"/);
  });
});

describe('composeExplanation', () => {
  it('titles and summarises an action with its evidence, rule, attempt, budget and run', () => {
    const { title, summary } = composeExplanation({
      kind: 'rerun-failed-jobs',
      rule: 'rule-3-rerun-killed-job',
      reason: 'job build lost with its runner',
      cause: { kind: 'node-pressure-eviction', resource: 'memory', container: null },
      signal: { source: 'pod-event', detail: 'Evicted (kubelet): The node was low on memory.' },
      jobNames: ['build'],
      runId: 42,
      runAttempt: 1,
      runUrl: 'https://github.com/acme/app/actions/runs/42',
      runner: { cluster: 'prod', namespace: 'arc-runners', name: 'arc-linux-abc-runner-x' },
      node: 'ip-10-0-0-1',
      lostAt: Date.parse('2026-03-02T09:01:00Z'),
      actedAt: Date.parse('2026-03-02T09:02:00Z'),
      budget: { limit: 2, used: 1 },
    });
    expect(title).toBe('Re-ran build: runner pod was evicted (MemoryPressure)');
    for (const part of [
      '`arc-runners/arc-linux-abc-runner-x` in cluster `prod`',
      '`ip-10-0-0-1`',
      'pod-event: Evicted (kubelet): The node was low on memory.',
      '2026-03-02T09:01:00.000Z',
      '`rule-3-rerun-killed-job`',
      '1 (this re-run is attempt 2)',
      '1 of 2 re-runs left',
      '(https://github.com/acme/app/actions/runs/42)',
    ])
      expect(summary).toContain(part);
  });
});

async function feed(deps: EngineDeps, observations: ReturnType<typeof observe>) {
  const reports: EngineReport[] = [];
  for (const observation of observations)
    reports.push(await runEngine({ kind: 'observation', observation }, deps));
  return reports;
}

describe('composeExplanation for a cancel with no Kubernetes signal', () => {
  it('says what it cancelled and why, and that cancels do not charge the budget', () => {
    const { title, summary } = composeExplanation({
      kind: 'force-cancel-run',
      rule: 'rule-4-hung-job',
      reason: 'job build hung on a runner that is gone',
      cause: { kind: 'node-not-ready' },
      signal: null,
      jobNames: [],
      runId: 42,
      runAttempt: 3,
      runUrl: 'https://github.com/acme/app/actions/runs/42',
      runner: null,
      node: null,
      lostAt: null,
      actedAt: Date.parse('2026-03-02T09:02:00Z'),
      budget: null,
    });
    expect(title).toBe("Force-cancelled run 42: runner's node stopped responding (NotReady)");
    expect(summary).toContain('- **Node**: not known');
    expect(summary).toContain('- **Seen in**: no Kubernetes signal recorded');
    expect(summary).toContain('- **Attempt**: 3\n');
    expect(summary).toContain('not charged (only re-runs use the budget)');
  });
});

/** The harness's engine with check runs on (as config/compose-engine.ts builds it unless CHECK_RUNS=off). */
const withCheckRuns = (harness: EngineHarness, extra: Partial<EngineDeps> = {}): EngineDeps =>
  Object.assign({}, harness.engine, { checkRuns: publisherFor(harness.github) }, extra);

describe('the engine explains each re-run with one check run', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('on the run’s commit: neutral, with the evidence, the rule, the attempt, the budget, the run', async () => {
    const { runId, observations } = await killedMidJob(harness);
    const deps = withCheckRuns(harness);
    const reports = [...(await feed(deps, observations)), ...(await feed(deps, observations))];
    const reruns = reports
      .flatMap((r) => r.actions)
      .filter((a) => a.kind === 'rerun-failed-jobs' && a.outcome === 'succeeded');
    expect(reruns).toHaveLength(1);
    expect(harness.github.run(runId)?.attempt).toBe(2);

    const checkRuns = checkRunsOf(harness.github.app);
    expect(checkRuns.map((c) => c.externalId)).toEqual([reruns[0]?.key]);
    const [checkRun] = checkRuns;
    expect(checkRun).toMatchObject({
      name: 'runner-medic',
      headSha: harness.github.run(runId)?.headSha,
      status: 'completed',
      conclusion: 'neutral',
      detailsUrl: `https://github.com/acme/app/actions/runs/${runId}`,
    });
    expect(checkRun?.title).toMatch(/^Re-ran build: /);
    for (const part of [
      `${NS}/${SET}-x7k2p-runner-aaaaa`,
      '`rule-3-rerun-killed-job`',
      '**Attempt**: 1 (this re-run is attempt 2)',
      '**Re-run budget**: 1 of 2 re-runs left for this job',
      `[run ${runId}](https://github.com/acme/app/actions/runs/${runId})`,
    ])
      expect(checkRun?.summary).toContain(part);
  });
});

describe('a crash around the check run never makes two, and loses none', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('a crash before publishing: the sweep’s outbox explains it; once more: still one', async () => {
    const { observations } = await killedMidJob(harness);
    // The invocation dies after storing the result and its audit event (it never goes on).
    let died: () => void = () => undefined;
    const crashed = new Promise<void>((resolve) => (died = resolve));
    const crashing = withCheckRuns(harness, {
      afterAct: (action) =>
        action.target.kind === 'rerun-failed-jobs'
          ? (died(), new Promise<void>(() => undefined))
          : undefined,
    });
    void feed(crashing, observations);
    await crashed;
    expect(checkRunsOf(harness.github.app)).toHaveLength(0);

    const deps = withCheckRuns(harness);
    expect(await publishOutbox(deps)).toBe(1);
    expect(checkRunsOf(harness.github.app)).toHaveLength(1);
    // A second publisher (a crash after creating, before marking the audit published) finds it.
    const [audit] = harness.remediationEvents().filter((e) => e['action'] === 'rerun-failed-jobs');
    const { explainAction } = await import('../../functions/engine/explain-action.js');
    const again = await explainAction(
      { detailType: 'Remediation', detail: audit ?? {} },
      { ...deps, checkRuns: publisherFor(harness.github) },
    );
    expect(again).toMatchObject({ explained: true, created: false });
    expect(checkRunsOf(harness.github.app)).toHaveLength(1);
  });
});

describe('dry run, and check runs switched off', () => {
  it('a dry-run re-run gets no check run', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ dryRun: true, allow: { namespaces: [NS] } });
      const { observations } = await killedMidJob(harness);
      const reports = await feed(withCheckRuns(harness), observations);
      expect(reports.flatMap((r) => r.actions)).toContainEqual(
        expect.objectContaining({ kind: 'rerun-failed-jobs', outcome: 'dry-run' }),
      );
      expect(checkRunsOf(harness.github.app)).toHaveLength(0);
    } finally {
      await harness.stop();
    }
  });

  it('without a publisher (CHECK_RUNS=off) the re-run happens and no check run is made', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ allow: { namespaces: [NS] } });
      const { runId, observations } = await killedMidJob(harness);
      await feed(harness.engine, observations);
      expect(harness.github.run(runId)?.attempt).toBe(2);
      expect(checkRunsOf(harness.github.app)).toHaveLength(0);
    } finally {
      await harness.stop();
    }
  });

  it('with checkRuns: false in the policy the re-run happens and no check run is made', async () => {
    const harness = new EngineHarness();
    await harness.start();
    try {
      harness.usePolicy({ checkRuns: false, allow: { namespaces: [NS] } });
      const { runId, observations } = await killedMidJob(harness);
      await feed(withCheckRuns(harness), observations);
      expect(harness.github.run(runId)?.attempt).toBe(2);
      expect(checkRunsOf(harness.github.app)).toHaveLength(0);
    } finally {
      await harness.stop();
    }
  });
});
