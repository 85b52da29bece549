import { SteadyWorld } from '../../bench/steady-world.js';

/**
 * A healthy, busy org (the `steady` bench's world, smaller): runner-medic as deployed, every
 * runner registered at the GitHub twin, jobs queued, run and replaced, webhooks delivered, a sweep
 * a minute. Its GitHub calls stay within the sweep's share of the installation's hour (5% of
 * 5,000, accrued over the hour plus a burst of 10), whatever the number of runners, and the App's
 * own calls stay at about one delivery page a sweep. Counted from the GitHub twin's request log.
 */
const MINUTES = 10;
const JOBS_PER_HOUR = 300;

describe('a healthy hour stays within the budget', () => {
  const world = new SteadyWorld({
    runners: 200,
    repositories: 50,
    jobsPerHour: JOBS_PER_HOUR,
    clusters: 2,
    namespaces: 10,
  });
  beforeAll(async () => {
    await world.start();
    await world.populate();
  }, 120_000);
  afterAll(() => world.stop());

  it('spends at most its share of GitHub', async () => {
    const github = world.githubMark();
    await world.play(MINUTES * 60_000, 60_000);
    const calls = world.github.requests().slice(github);
    const installation = calls.filter((r) => r.by === 'runner-medic' && r.path !== '/rate_limit');
    const share = 10 + Math.ceil((0.05 * 5_000 * MINUTES) / 60);
    expect(world.errors).toEqual([]);
    expect(world.jobsStarted).toBeGreaterThanOrEqual((JOBS_PER_HOUR * MINUTES) / 60 - 2);
    expect(installation.length).toBeGreaterThan(0);
    expect(installation.length).toBeLessThanOrEqual(share);
    // App calls: the delivery scan reads back only to its cursor (a page a sweep here).
    expect(calls.filter((r) => r.by === 'app').length).toBeLessThanOrEqual(3 * MINUTES);
  }, 900_000);

  it('reads of Kubernetes only what changed, after the first full list', async () => {
    const marks = world.kubeMark();
    const jobs = world.jobsStarted;
    await world.play(MINUTES * 60_000, 60_000);
    const read = world.kubes
      .flatMap((k, c) => k.audit.requests.slice(marks[c] ?? 0))
      .filter((r) => r.by === 'runner-medic')
      .reduce((n, r) => n + (r.objects ?? 0), 0);
    expect(world.errors).toEqual([]);
    // Listing every runner each sweep read 2 objects a runner a sweep (4,000 here); following
    // them reads what jobs change (their runners' objects, their events' reads), 20 a job at most.
    expect(read).toBeLessThanOrEqual(20 * (world.jobsStarted - jobs));
    expect(read).toBeLessThan(2 * 200 * MINUTES);
  }, 900_000);
});
