import { GithubResponseError } from '../../../functions/adapters/github/github-errors.js';
import { ORG, REPO, SCALE_SET, buildWorld } from '../../sim/github/sim-fixture.js';
import { gatewayFor } from './gateway-fixture.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

/** Rewrites the body text of matching responses from the simulator, as a broken proxy might. */
function tampering() {
  const rules: { path: RegExp; edit: (body: string) => string }[] = [];
  const tamperedFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    const rule = rules.find((r) => r.path.test(path));
    if (!rule || response.status >= 300) return response;
    const edited = new Response(rule.edit(await response.text()), {
      status: response.status,
      headers: response.headers,
    });
    // A response fetch returns always names its URL (octokit's paginate reads it); keep it.
    return Object.defineProperty(edited, 'url', { value: response.url });
  };
  return { rules, tamperedFetch };
}

describe('GithubGateway parses every body with zod and never trusts its shape', () => {
  const world = buildWorld({ name: 'ci', jobs: [{ name: 'build', runsOn: SCALE_SET }] });
  const { sim, installationId } = world;
  const ref = { repo: REPO, installationId };
  const { rules, tamperedFetch } = tampering();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());
  afterEach(() => {
    rules.length = 0;
  });

  it('names each field of a job that has the wrong type or is missing', async () => {
    const gateway = gatewayFor(sim, undefined, { fetch: tamperedFetch });
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    const jobId = jobIds[0] ?? 0;
    rules.push({
      path: /\/actions\/jobs\/\d+$/,
      edit: (body) => {
        const job = JSON.parse(body) as Record<string, unknown>;
        delete job['labels'];
        return JSON.stringify({ ...job, run_id: String(runId) });
      },
    });
    const error = await rejection(gateway.getJob(ref, jobId));
    expect(error).toBeInstanceOf(GithubResponseError);
    expect(String(error)).toContain(`get job ${jobId} in ${REPO}: unexpected response at`);
    expect(String(error)).toMatch(/run_id/);
    expect(String(error)).toMatch(/labels/);

    rules.length = 0;
    rules.push({
      path: /\/runs\/\d+\/jobs$/,
      edit: (body) => body.replace(/"status":"queued"/, '"status":7'),
    });
    const listed = await rejection(gateway.listJobs(ref, runId));
    expect(String(listed)).toContain('unexpected response at jobs.0.status');
  });

  it('refuses an id that a JavaScript number cannot hold exactly', async () => {
    const gateway = gatewayFor(sim, undefined, { fetch: tamperedFetch });
    const { jobIds } = sim.triggerRun(REPO, 'ci');
    const jobId = jobIds[0] ?? 0;
    rules.push({
      path: /\/actions\/jobs\/\d+$/,
      edit: (body) => body.replace(`"id":${jobId}`, '"id":9007199254740993'),
    });
    expect(String(await rejection(gateway.getJob(ref, jobId)))).toContain(
      'unexpected response at id',
    );
    rules.length = 0;
    expect((await gateway.getJob(ref, jobId))?.jobId).toBe(jobId);
  });

  it('rejects runner and annotation pages of the wrong shape', async () => {
    const gateway = gatewayFor(sim, undefined, { fetch: tamperedFetch });
    sim.actions.registerRunner(world.scaleSetId, 'r-1');
    rules.push({
      path: /\/actions\/runners$/,
      edit: (body) => body.replace('"busy":false', '"busy":"no"'),
    });
    expect(String(await rejection(gateway.listRunners({ org: ORG }, installationId)))).toContain(
      'runners.0.busy',
    );
    const { jobIds } = sim.triggerRun(REPO, 'ci');
    rules.push({ path: /\/annotations$/, edit: () => '{"annotations":[]}' });
    const annotations = await rejection(gateway.listAnnotations(ref, jobIds[0] ?? 0));
    expect(annotations).toBeInstanceOf(GithubResponseError);
    expect(String(annotations)).toContain('(root)');
  });
});
