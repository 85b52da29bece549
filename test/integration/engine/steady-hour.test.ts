import { SteadyWorld } from '../../bench/steady-world.js';

/**
 * A healthy, busy org of 10,000 runners (the `steady` bench's world, five minutes of its hour at a
 * smaller pace): runner-medic as deployed, every runner registered at the GitHub twin (the orphan
 * scan would read 100 pages of them), jobs queued, run and replaced, webhooks delivered, a sweep
 * a minute. Its GitHub calls stay within the sweep's share of the installation's hour (5% of
 * 5,000, accrued over the hour plus a burst of 10), whatever the number of runners, and the App's
 * own calls stay at about one delivery page a sweep. Counted from the GitHub twin's request log.
 */
const MINUTES = 5;
const RUNNERS = 10_000;
const JOBS_PER_HOUR = 300;

describe('a healthy hour stays within the budget', () => {
  const world = new SteadyWorld({
    runners: RUNNERS,
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

  it('reads of Kubernetes only what changed, after the first full list, and writes ten store items a job', async () => {
    const marks = world.kubeMark();
    const jobs = world.jobsStarted;
    const writes = world.store.writes;
    const kinds = new Map(world.store.writesByKind);
    await world.play(MINUTES * 60_000, 60_000);
    const read = world.kubes
      .flatMap((k, c) => k.audit.requests.slice(marks[c] ?? 0))
      .filter((r) => r.by === 'runner-medic')
      .reduce((n, r) => n + (r.objects ?? 0), 0);
    expect(world.errors).toEqual([]);
    // Listing every runner each sweep read 2 objects a runner a sweep (200,000 here); following
    // them reads what jobs change (their runners' objects, their events' reads), 20 a job at most.
    expect(read).toBeLessThanOrEqual(20 * (world.jobsStarted - jobs));
    expect(read).toBeLessThan(2 * RUNNERS * MINUTES);

    // A job's writes: its three deliveries (claimed, then published), its record at each of
    // them, and its runner on its node (its job cache too); then the sweep's cursors, a few a
    // minute. No timer a job, no separate job cache, no write for an idle runner.
    const started = world.jobsStarted - jobs;
    expect(world.store.writes - writes).toBeLessThanOrEqual(10 * (started + 2) + 8 * MINUTES);
    const grew = [...world.store.writesByKind]
      .filter(([kind, n]) => n > (kinds.get(kind) ?? 0))
      .map(([kind]) => kind)
      .sort();
    const perJob = [
      'Put DELIVERY-BODY#/DELIVERY',
      'Update DELIVERY-BODY#/DELIVERY',
      'Put JOB#/JOB',
      'Put NODE#/RUNNER#',
    ];
    const cursors = [
      'Put SWEEP#/CURSOR',
      'Put WATCH-CURSOR/CLUSTER#',
      'Put REPOSCAN#/CURSOR',
      'Put INSTANCE#/NODE',
    ];
    expect(grew).toEqual(expect.arrayContaining(perJob));
    expect(grew.filter((k) => !perJob.includes(k) && !cursors.includes(k))).toEqual([]);
  }, 900_000);
});
