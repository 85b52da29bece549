import { REFUSED_TOKEN_MS } from '../../../functions/adapters/github/octokit-factory.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, completedJob } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

/**
 * An org that suspends the App's installation: GitHub refuses its tokens with 403 ("This
 * installation has been suspended"). It affects only that org, is reported each sweep, and is
 * asked again only every REFUSED_TOKEN_MS; the other org's sweep goes on.
 */
describe('a suspended installation', () => {
  const harness = new EngineHarness();
  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
  });
  afterAll(() => harness.stop());

  it('fails only its own org, reports it, and leaves the other org’s sweep whole', async () => {
    const { github, clock } = harness;
    const installations: Record<string, number> = {};
    for (const org of ['acme', 'beta']) {
      github.createOrg(org);
      github.createRepo(`${org}/app`);
      installations[org] = github.createInstallation(org);
      const scaleSet = github.actions.registerScaleSet({ owner: org, name: SET });
      github.actions.registerRunner(scaleSet, `${SET}-${org}-runner-1`);
      // The org is known from an earlier job's webhook, with its installation.
      const record = completedJob({
        jobId: org === 'acme' ? 41 : 42,
        runId: 7,
        runnerId: 1,
        runnerName: 'an-earlier-runner',
        installationId: installations[org] ?? null,
        createdAt: clock.now() - 600_000,
        startedAt: clock.now() - 500_000,
        completedAt: clock.now() - 400_000,
      });
      await harness.engine.store.recordJob(
        { ...record, repository: { ...record.repository, fullName: `${org}/app`, owner: org } },
        clock.now(),
      );
    }
    github.suspendInstallation(installations['acme'] ?? 0);

    const from = github.requests().length;
    await expect(runEngine({ kind: 'sweep' }, harness.engine)).resolves.toBeDefined();
    const calls = github
      .requests()
      .slice(from)
      .map((r) => `${r.method} ${r.path} ${r.status}`);
    // acme: its token is refused, once, and nothing else is asked of it; beta: its runners are
    // read as ever.
    const refused = `POST /app/installations/${installations['acme']}/access_tokens 403`;
    const tokensOfAcme = (since: number) =>
      github
        .requests()
        .slice(since)
        .map((r) => `${r.method} ${r.path} ${r.status}`)
        .filter((c) => c.startsWith(`POST /app/installations/${installations['acme']}/`));
    expect(tokensOfAcme(from)).toEqual([refused]);
    expect(calls).toContain('GET /orgs/beta/actions/runners 200');
    expect(calls.some((c) => c.startsWith('GET /orgs/acme/'))).toBe(false);
    expect(harness.metrics.map((m) => [m.name, m.dimensions])).toContainEqual([
      'InstallationUnavailable',
      { org: 'acme' },
    ]);
    expect(
      harness.metrics.filter(
        (m) => m.name === 'InstallationUnavailable' && m.dimensions?.org === 'beta',
      ),
    ).toEqual([]);

    // The refusal stands for REFUSED_TOKEN_MS: the next sweeps report the org without asking
    // GitHub again, then one asks once more.
    let since = github.requests().length;
    const reported = () =>
      harness.metrics.filter(
        (m) => m.name === 'InstallationUnavailable' && m.dimensions?.org === 'acme',
      ).length;
    const before = reported();
    await clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, harness.engine);
    expect(tokensOfAcme(since)).toEqual([]);
    expect(reported()).toBeGreaterThan(before);
    await clock.advance(REFUSED_TOKEN_MS);
    since = github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    expect(tokensOfAcme(since)).toEqual([refused]);
  }, 120_000);
});
