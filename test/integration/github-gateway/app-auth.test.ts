import { GithubRequestError } from '../../../functions/adapters/github/github-errors.js';
import {
  MINUTE,
  ORG,
  REPO,
  SCALE_SET,
  buildWorld,
  foreignAppKey,
} from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('GithubGateway authenticates as the GitHub App, per installation', () => {
  const world = buildWorld({
    name: 'ci',
    jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 10 * MINUTE }],
  });
  const { sim, installationId } = world;
  sim.createOrg('beta');
  sim.createRepo('beta/svc');
  const betaInstallation = sim.createInstallation('beta');
  sim.defineWorkflow('beta/svc', { name: 'ci', jobs: [{ name: 'b', runsOn: SCALE_SET }] });
  sim.createOrg('stranger');
  sim.createRepo('stranger/tool');
  const tokenPath = (id: number) => `/app/installations/${id}/access_tokens`;
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('creates an installation token with the App JWT once, and reuses it for every later call', async () => {
    const gateway = gatewayFor(sim);
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const ref = { repo: REPO, installationId };
    const from = sim.requests().length;
    await gateway.getRun(ref, runId);
    await gateway.getJob(ref, jobIds[0] ?? 0);
    await gateway.listJobs(ref, runId);
    expect(await gateway.cancelRun(ref, { runId, runAttempt: 1 })).toEqual({ result: 'done' });
    const calls = sim.requests().slice(from);
    expect(calls.filter((r) => r.path.startsWith('/app'))).toEqual([
      expect.objectContaining({ method: 'POST', path: tokenPath(installationId), status: 201 }),
    ]);
    expect(calls.filter((r) => !r.path.startsWith('/app')).map((r) => r.by)).toEqual([
      'runner-medic',
      'runner-medic',
      'runner-medic',
      'runner-medic',
      'runner-medic',
    ]);
    expect(sim.audit().at(-1)).toMatchObject({ by: 'runner-medic', verb: 'cancel', status: 202 });
  });

  it('keeps one client and one token per installation, each seeing only its own account', async () => {
    const gateway = gatewayFor(sim);
    const acme = sim.triggerRun(REPO, 'ci').runId;
    const beta = sim.triggerRun('beta/svc', 'ci').runId;
    const from = sim.requests().length;
    expect(
      await gateway.getRun({ repo: 'beta/svc', installationId: betaInstallation }, beta),
    ).toEqual(expect.objectContaining({ runId: beta }));
    expect(await gateway.getRun({ repo: REPO, installationId }, acme)).toEqual(
      expect.objectContaining({ runId: acme }),
    );
    expect(await gateway.getRun({ repo: REPO, installationId: betaInstallation }, acme)).toBeNull();
    await gateway.getRun({ repo: 'beta/svc', installationId: betaInstallation }, beta);
    expect(served(sim, from, true).filter((line) => line.startsWith('POST /app'))).toEqual([
      `POST ${tokenPath(betaInstallation)} 201`,
      `POST ${tokenPath(installationId)} 201`,
    ]);
  });

  it('finds the installation of a ref that has none, once per account, as the App', async () => {
    const gateway = gatewayFor(sim);
    const { runId } = sim.triggerRun(REPO, 'ci');
    const from = sim.requests().length;
    const ref = { repo: REPO, installationId: null };
    expect((await gateway.getRun(ref, runId))?.runId).toBe(runId);
    expect(await gateway.cancelRun(ref, { runId, runAttempt: 1 })).toEqual({ result: 'done' });
    const runners = await gateway.listRunners({ org: ORG }, null);
    expect(runners.every((r) => r.installationId === installationId)).toBe(true);
    expect(served(sim, from, true)).toEqual([
      `GET /repos/${REPO}/installation 200`,
      `POST ${tokenPath(installationId)} 201`,
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
      `GET /repos/${REPO}/actions/runs/${runId} 200`,
      `POST /repos/${REPO}/actions/runs/${runId}/cancel 202`,
      `GET /orgs/${ORG}/actions/runners 200`,
    ]);
    await gateway.listRunners({ org: 'beta' }, null);
    expect(served(sim, from, true).slice(6)).toEqual([
      'GET /orgs/beta/installation 200',
      `POST ${tokenPath(betaInstallation)} 201`,
      'GET /orgs/beta/actions/runners 200',
    ]);
  });

  it('throws GithubRequestError, never a not-found outcome, when the App is not installed or the installation is unknown', async () => {
    const gateway = gatewayFor(sim);
    const from = sim.requests().length;
    const notInstalled = await rejection(
      gateway.rerunJob({ repo: 'stranger/tool', installationId: null }, 2 ** 33, {
        runId: 2 ** 33,
        runAttempt: 1,
      }),
    );
    expect(notInstalled).toBeInstanceOf(GithubRequestError);
    expect(notInstalled).toMatchObject({ status: 404 });
    expect(String(notInstalled)).toContain('not installed');

    const unknown = await rejection(
      gateway.cancelRun({ repo: REPO, installationId: 7 }, { runId: 2 ** 33, runAttempt: 1 }),
    );
    expect(unknown).toBeInstanceOf(GithubRequestError);
    expect(unknown).toMatchObject({ status: 404 });
    expect(served(sim, from, true)).toEqual([
      'GET /repos/stranger/tool/installation 404',
      `POST ${tokenPath(7)} 404`,
    ]);
  });

  it('looks the installation up again after its token call was refused, as after a reinstall', async () => {
    let refuseTokens = true;
    const gatekeeper: typeof fetch = (input, init) => {
      const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
      if (refuseTokens && path.endsWith('/access_tokens')) {
        return Promise.resolve(
          new Response('{"message":"Not Found"}', {
            status: 404,
            headers: { 'content-type': 'application/json' },
          }),
        );
      }
      return fetch(input, init);
    };
    const gateway = gatewayFor(sim, undefined, { fetch: gatekeeper });
    const from = sim.requests().length;
    const refused = await rejection(gateway.listRunners({ org: ORG }, null));
    expect(refused).toMatchObject({ name: 'GithubRequestError', status: 404 });
    refuseTokens = false;
    expect(await gateway.listRunners({ org: ORG }, null)).toEqual(expect.any(Array));
    await gateway.listRunners({ org: ORG }, null);
    expect(served(sim, from, true)).toEqual([
      `GET /orgs/${ORG}/installation 200`,
      `GET /orgs/${ORG}/installation 200`,
      `POST ${tokenPath(installationId)} 201`,
      `GET /orgs/${ORG}/actions/runners 200`,
      `GET /orgs/${ORG}/actions/runners 200`,
    ]);
  });

  it('works under a GHES-style /api/v3 base path, through an injected fetch', async () => {
    const seen: string[] = [];
    const ghesFetch: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      seen.push(url.pathname);
      url.pathname = url.pathname.replace(/^\/api\/v3/, '');
      return fetch(url, init);
    };
    const gateway = gatewayFor(sim, undefined, {
      baseUrl: `${sim.baseUrl}/api/v3/`,
      fetch: ghesFetch,
    });
    const { runId } = sim.triggerRun(REPO, 'ci');
    expect(
      await gateway.cancelRun({ repo: REPO, installationId: null }, { runId, runAttempt: 1 }),
    ).toEqual({ result: 'done' });
    expect(seen).toEqual([
      `/api/v3/repos/${REPO}/installation`,
      `/api/v3${tokenPath(installationId)}`,
      `/api/v3/repos/${REPO}/actions/runs/${runId}`,
      `/api/v3/repos/${REPO}/actions/runs/${runId}/cancel`,
    ]);
    const notInstalled = await rejection(
      gateway.getRun({ repo: 'stranger/tool', installationId: null }, runId),
    );
    expect(notInstalled).toMatchObject({ name: 'GithubRequestError', status: 404 });
    const unknown = await rejection(gateway.getRun({ repo: REPO, installationId: 7 }, runId));
    expect(unknown).toMatchObject({ name: 'GithubRequestError', status: 404 });
  });

  it('throws GithubRequestError (401) when the App key is wrong', async () => {
    const other = foreignAppKey();
    const gateway = gatewayFor(sim, undefined, { privateKey: other });
    const refused = await rejection(gateway.getRun({ repo: REPO, installationId }, 1));
    expect(refused).toBeInstanceOf(GithubRequestError);
    expect(refused).toMatchObject({ status: 401 });
  });
});
