import { QUEUED_REPOSITORIES_PER_SWEEP } from '../../../functions/engine/discover-queued-jobs.js';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

/**
 * The sweep's own look at GitHub: a queued job whose every webhook was lost is found from the
 * installation's queued runs, a few repositories per sweep in turn, and stored so that the
 * starvation check sees it. Jobs no scale set would take are left alone.
 */
const REPOS = 45;
const harness = new EngineHarness();
let installationId = 0;

beforeAll(async () => {
  await harness.start();
  const { github, clock } = harness;
  github.createOrg('acme');
  for (let i = 0; i < REPOS; i++) github.createRepo(`acme/repo-${String(i).padStart(2, '0')}`);
  installationId = github.createInstallation('acme');
  const set = seedRunnerSet(harness);
  seedRunner(harness, set, `${SET}-x7k2p-runner-aaaaa`, { phase: 'Running', ready: true });
  // One job of the org reached runner-medic long ago: the org is known, with its installation.
  await harness.store.recordJob(
    {
      repository: { id: 1, fullName: 'acme/repo-00', owner: 'acme', name: 'repo-00' },
      installationId,
      annotations: null,
      job: {
        jobId: 1,
        runId: 1,
        runAttempt: 1,
        name: 'old',
        workflowName: 'ci',
        headBranch: 'main',
        labels: [SET],
        status: 'completed',
        conclusion: 'success',
        runnerId: null,
        runnerName: null,
        runnerGroupId: null,
        runnerGroupName: null,
        htmlUrl: 'https://github.com/acme/repo-00/actions/runs/1/job/1',
        createdAt: new Date(clock.now() - 3_600_000).toISOString(),
        startedAt: new Date(clock.now() - 3_600_000).toISOString(),
        completedAt: new Date(clock.now() - 3_000_000).toISOString(),
      },
    },
    clock.now(),
  );
  // Two runs nobody told runner-medic of: one for the scale set in the last repository, one
  // for GitHub-hosted runners in the first.
  for (const [repo, runsOn] of [
    [`acme/repo-${REPOS - 1}`, SET],
    ['acme/repo-00', 'ubuntu-latest'],
  ] as const) {
    github.defineWorkflow(repo, {
      name: 'ci',
      jobs: [{ name: 'build', runsOn, durationMs: 60_000 }],
    });
    github.triggerRun(repo, 'ci');
  }
  await clock.advance(1000);
  // The first sweep after a deployment learns where the scale set lives: until then no queued
  // job can be told to be the scale set's, and GitHub is not asked.
  const mark = github.requests().length;
  await runEngine({ kind: 'sweep' }, harness.engine);
  expect(runListsBy(mark)).toEqual([]);
  await clock.advance(60_000);
}, 120_000);
afterAll(() => harness.stop());

const queuedIn = async (repo: string) =>
  (await harness.store.readQueuedJobs('acme', harness.clock.now())).facts.jobs.filter(
    (j) => j.repository.fullName === repo,
  );
const runListsBy = (mark: number) =>
  harness.github
    .requests()
    .slice(mark)
    .filter(
      (r) => r.by === 'runner-medic' && r.method === 'GET' && r.path.endsWith('/actions/runs'),
    );

/**
 * Sweeps a minute apart until the scan has asked every repository once (its place is back at the
 * first); the repositories whose runs each sweep listed, in order. A repository whose runs were
 * listed but whose jobs the budget left unread is asked again by the next sweep.
 */
async function askEveryRepository(): Promise<string[][]> {
  const perSweep: string[][] = [];
  do {
    const mark = harness.github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    perSweep.push(runListsBy(mark).map((r) => r.path.split('/actions/')[0] ?? ''));
    await harness.clock.advance(60_000);
  } while ((await harness.store.repositoryScan('acme')) !== 0 && perSweep.length < 30);
  return perSweep;
}

/** The repositories in the order asked, a repository asked again at once counted once. */
const inOrder = (asked: string[]) => asked.filter((r, i) => r !== asked[i - 1]);

describe('the sweep finds queued jobs no webhook told of', () => {
  it('asks a bounded number of repositories per sweep, in turn, and stores the scale set’s job', async () => {
    const perSweep = await askEveryRepository();
    // Bounded per sweep, and by the installation's observe budget (its share of the hour).
    for (const asked of perSweep)
      expect(asked.length).toBeLessThanOrEqual(QUEUED_REPOSITORIES_PER_SWEEP);
    expect(perSweep.length).toBeGreaterThan(1);
    expect(inOrder(perSweep.flat())).toEqual(
      Array.from({ length: REPOS }, (_, i) => `/repos/acme/repo-${String(i).padStart(2, '0')}`),
    );
    const found = await queuedIn(`acme/repo-${REPOS - 1}`);
    expect(found.map((j) => [j.job.name, j.job.status, j.installationId])).toEqual([
      ['build', 'queued', installationId],
    ]);
  }, 180_000);

  it('leaves alone a queued job no scale set would take', async () => {
    expect(
      (await queuedIn('acme/repo-00')).filter((j) => j.job.labels.includes('ubuntu-latest')),
    ).toEqual([]);
  });

  it('starts again from the first repository once it has asked them all', async () => {
    const asked = inOrder((await askEveryRepository()).flat());
    expect(asked[0]).toBe('/repos/acme/repo-00');
    expect(asked).toHaveLength(REPOS);
  }, 180_000);
});
