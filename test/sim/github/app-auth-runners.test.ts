import { createAppAuth } from '@octokit/auth-app';
import { createSign } from 'node:crypto';
import {
  buildWorld,
  foreignAppKey,
  MINUTE,
  octokitFor,
  ORG,
  rejection,
  REPO,
  RestOctokit,
  SCALE_SET,
} from './sim-fixture.js';

const [owner, repo] = REPO.split('/') as [string, string];
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function jwt(privateKey: string, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(privateKey, 'base64url')}`;
}

describe('GitHub twin: App authentication and self-hosted runner registrations', () => {
  const world = buildWorld({
    name: 'ci',
    jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: MINUTE }],
  });
  const { sim, installationId, startRunner, clock } = world;
  let baseUrl = '';
  beforeAll(async () => {
    baseUrl = await sim.start();
  });
  afterAll(async () => sim.stop());

  it('issues installation tokens to @octokit/auth-app with the simulator’s key, and audits their calls as runner-medic', async () => {
    const medic = new RestOctokit({
      baseUrl,
      authStrategy: createAppAuth,
      auth: { appId: sim.app.appId, privateKey: sim.app.privateKey, installationId },
      log: quiet,
    });
    const { runId } = sim.triggerRun(REPO, 'ci');
    await medic.rest.actions.cancelWorkflowRun({ owner, repo, run_id: runId });
    expect(sim.audit().at(-1)).toMatchObject({ by: 'runner-medic', verb: 'cancel', status: 202 });
    const tokenCalls = sim
      .requests()
      .filter((r) => r.path === `/app/installations/${installationId}/access_tokens`);
    expect(tokenCalls.map((r) => r.status)).toEqual([201]);
  });

  it('corrects the clock skew the way GitHub makes auth-app do it, when JWTs are checked in sim time', async () => {
    const { sim: skewed } = buildWorld(
      { name: 'ci', jobs: [] },
      { jwtClock: clock, privateKey: sim.app.privateKey },
    );
    const url = await skewed.start();
    try {
      const app = new RestOctokit({
        baseUrl: url,
        authStrategy: createAppAuth,
        auth: { appId: skewed.app.appId, privateKey: skewed.app.privateKey },
        log: quiet,
      });
      const { data } = await app.request('GET /app');
      expect(data).toMatchObject({ id: skewed.app.appId, slug: 'runner-medic' });
      expect(skewed.requests().map((r) => `${r.path}:${r.status}`)).toEqual([
        '/app:401',
        '/app:200',
      ]);
    } finally {
      await skewed.stop();
    }
  });

  it('rejects App JWTs that are badly signed, too long-lived or from another app', async () => {
    const now = Math.floor(Date.now() / 1000);
    const post = (token: string) =>
      rejection(
        new RestOctokit({ baseUrl }).request(
          'POST /app/installations/{installation_id}/access_tokens',
          { installation_id: installationId, headers: { authorization: `bearer ${token}` } },
        ),
      );
    const foreignKey = foreignAppKey();
    expect(
      (await post(jwt(foreignKey, { iat: now - 30, exp: now + 500, iss: sim.app.appId }))).response
        ?.data,
    ).toMatchObject({ message: 'A JSON web token could not be decoded' });
    expect(
      (await post(jwt(sim.app.privateKey, { iat: now - 30, exp: now + 3600, iss: sim.app.appId })))
        .message,
    ).toMatch(/'Expiration time' claim \('exp'\) is too far in the future/);
    expect(
      (await post(jwt(sim.app.privateKey, { iat: now - 30, exp: now + 500, iss: 999 }))).status,
    ).toBe(401);
    const unknownInstallation = await rejection(
      new RestOctokit({ baseUrl }).request(
        'POST /app/installations/{installation_id}/access_tokens',
        {
          installation_id: 1,
          headers: {
            authorization: `bearer ${jwt(sim.app.privateKey, { iat: now - 30, exp: now + 500, iss: sim.app.appId })}`,
          },
        },
      ),
    );
    expect(unknownInstallation.status).toBe(404);
  });

  it('lists org runners by name, refuses to delete a busy one with 422, and deletes an idle one with 204', async () => {
    const medic = octokitFor(baseUrl, sim.issueInstallationToken(installationId));
    sim.triggerRun(REPO, 'ci');
    const busy = startRunner('busy-runner');
    const idle = startRunner('idle-runner');
    expect(busy.assignment).toBeDefined();
    expect(idle.assignment).toBeUndefined();
    const { data } = await medic.rest.actions.listSelfHostedRunnersForOrg({
      org: ORG,
      name: 'busy-runner',
    });
    expect(data.runners).toEqual([
      expect.objectContaining({
        id: busy.runnerId,
        name: 'busy-runner',
        status: 'online',
        busy: true,
        ephemeral: true,
        labels: [expect.objectContaining({ name: SCALE_SET })],
      }),
    ]);
    const refused = await rejection(
      medic.rest.actions.deleteSelfHostedRunnerFromOrg({ org: ORG, runner_id: busy.runnerId }),
    );
    expect(refused.status).toBe(422);
    expect(refused.response?.data).toMatchObject({
      message: 'Bad request - Runner "busy-runner" is still running a job',
    });
    const { data: one } = await medic.rest.actions.getSelfHostedRunnerForOrg({
      org: ORG,
      runner_id: idle.runnerId,
    });
    expect(one).toMatchObject({ name: 'idle-runner', status: 'online', busy: false });
    expect(
      (
        await medic.rest.actions.deleteSelfHostedRunnerFromOrg({
          org: ORG,
          runner_id: idle.runnerId,
        })
      ).status,
    ).toBe(204);
    expect(sim.actions.acquireJob('idle-runner')).toBeUndefined();
    const gone = medic.rest.actions.getSelfHostedRunnerForOrg({
      org: ORG,
      runner_id: idle.runnerId,
    });
    expect((await rejection(gone)).status).toBe(404);
    expect(
      (
        await rejection(
          medic.rest.actions.deleteSelfHostedRunnerFromOrg({ org: ORG, runner_id: idle.runnerId }),
        )
      ).status,
    ).toBe(404);
    expect(
      sim
        .audit()
        .filter((e) => e.verb === 'delete-runner')
        .map((e) => `${e.by}:${e.target}:${e.status}`),
    ).toEqual([
      `runner-medic:orgs/${ORG}/actions/runners/${busy.runnerId}:422`,
      `runner-medic:orgs/${ORG}/actions/runners/${idle.runnerId}:204`,
      `runner-medic:orgs/${ORG}/actions/runners/${idle.runnerId}:404`,
    ]);
  });

  it('keeps repository-level runners apart from the organisation’s', async () => {
    const person = octokitFor(baseUrl, sim.issueUserToken('alice'));
    const repoSet = sim.actions.registerScaleSet({ owner: REPO, name: 'repo-runners' });
    const runnerId = sim.actions.registerRunner(repoSet, 'repo-runner-1');
    const { data: repoRunners } = await person.rest.actions.listSelfHostedRunnersForRepo({
      owner,
      repo,
    });
    expect(repoRunners.runners.map((r) => r.id)).toEqual([runnerId]);
    const { data: orgRunners } = await person.rest.actions.listSelfHostedRunnersForOrg({
      org: ORG,
    });
    expect(orgRunners.runners.map((r) => r.name)).not.toContain('repo-runner-1');
    expect(
      (
        await person.rest.actions.deleteSelfHostedRunnerFromRepo({
          owner,
          repo,
          runner_id: runnerId,
        })
      ).status,
    ).toBe(204);
    expect(sim.audit().at(-1)).toMatchObject({
      by: 'user',
      verb: 'delete-runner',
      target: `repos/${REPO}/actions/runners/${runnerId}`,
    });
  });
});
