import { MINUTE, ORG, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor, served } from './gateway-fixture.js';

describe('GithubGateway lists and deletes runner registrations on the GitHub twin', () => {
  const world = buildWorld({
    name: 'ci',
    jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: 10 * MINUTE }],
  });
  const { sim, startRunner, installationId, scaleSetId } = world;
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());

  it('lists org runners across pages as registrations, with busy, labels, owner and installation', async () => {
    const gateway = gatewayFor(sim);
    sim.triggerRun(REPO, 'ci');
    const busy = startRunner('busy-runner');
    const idle = Array.from({ length: 104 }, (_, i) =>
      sim.actions.registerRunner(scaleSetId, `${SCALE_SET}-idle-${i}`),
    );
    const from = sim.requests().length;
    const runners = await gateway.listRunners({ org: ORG }, installationId);
    expect(runners).toHaveLength(105);
    expect(runners.map((r) => r.id).sort()).toEqual([busy.runnerId, ...idle].sort());
    expect(runners.find((r) => r.id === busy.runnerId)).toEqual({
      id: busy.runnerId,
      name: 'busy-runner',
      status: 'online',
      busy: true,
      labels: [SCALE_SET],
      owner: { org: ORG },
      installationId,
      offlineSince: null,
    });
    expect(runners.filter((r) => r.busy)).toHaveLength(1);
    expect(served(sim, from)).toEqual([
      `GET /orgs/${ORG}/actions/runners 200`,
      `GET /orgs/${ORG}/actions/runners 200`,
    ]);
  });

  it('deletes an idle runner (done), refuses a busy one (busy, 422) and reports a gone one as not-found', async () => {
    const gateway = gatewayFor(sim);
    const busy = sim.runners().find((r) => r.name === 'busy-runner');
    const idle = sim.runners().find((r) => r.name === `${SCALE_SET}-idle-0`);
    if (!busy || !idle) throw new Error('runners missing');

    const from = sim.requests().length;
    expect(await gateway.deleteRunner({ org: ORG }, installationId, busy.id)).toEqual({
      result: 'busy',
      message: 'Bad request - Runner "busy-runner" is still running a job',
    });
    expect(await gateway.deleteRunner({ org: ORG }, installationId, idle.id)).toEqual({
      result: 'done',
    });
    expect(await gateway.deleteRunner({ org: ORG }, installationId, idle.id)).toEqual({
      result: 'not-found',
      message: 'Not Found',
    });
    expect(served(sim, from)).toEqual([
      `DELETE /orgs/${ORG}/actions/runners/${busy.id} 422`,
      `DELETE /orgs/${ORG}/actions/runners/${idle.id} 204`,
      `DELETE /orgs/${ORG}/actions/runners/${idle.id} 404`,
    ]);
    const names = (await gateway.listRunners({ org: ORG }, installationId)).map((r) => r.name);
    expect(names).toContain('busy-runner');
    expect(names).not.toContain(`${SCALE_SET}-idle-0`);
  });

  it('keeps repository runners apart from the organisation’s', async () => {
    const gateway = gatewayFor(sim);
    const repoSet = sim.actions.registerScaleSet({ owner: REPO, name: 'repo-runners' });
    const runnerId = sim.actions.registerRunner(repoSet, 'repo-runner-1');
    const owner = { repo: REPO };
    expect(await gateway.listRunners(owner, installationId)).toEqual([
      expect.objectContaining({
        id: runnerId,
        name: 'repo-runner-1',
        status: 'offline',
        busy: false,
        labels: ['repo-runners'],
        owner,
      }),
    ]);
    const org = await gateway.listRunners({ org: ORG }, installationId);
    expect(org.map((r) => r.id)).not.toContain(runnerId);
    expect(await gateway.deleteRunner(owner, installationId, runnerId)).toEqual({
      result: 'done',
    });
    expect(sim.audit().at(-1)).toMatchObject({
      by: 'runner-medic',
      verb: 'delete-runner',
      target: `repos/${REPO}/actions/runners/${runnerId}`,
      status: 204,
    });
    expect(await gateway.listRunners(owner, installationId)).toEqual([]);
  });
});
