/**
 * The `steady` section of `npm run bench`: one simulated hour of a busy, healthy org at the
 * deployed sweep schedule, per world size, counted from the twins' and dynalite's own request
 * logs; then the growth exponent of each per-hour figure against the number of runners.
 */
import { readFileSync } from 'node:fs';
import { FULL_RELIST_MS } from '../../functions/engine/sweep.js';
import { listArg, type BenchSection } from './section.js';
import { SteadyWorld, type SteadyFunction, type SteadySize } from './steady-world.js';

// The default fits the whole bench in its 15 minutes: two small worlds, 5 simulated minutes scaled
// to the hour. --full plays the whole hour at 1,000, 10,000 and 50,000 runners.
const STEADY_RUNNERS = [1_000, 3_000];
const STEADY_MINUTES = 5;
const STEADY_RUNNERS_FULL = [1_000, 10_000, 50_000];
const HOUR_MS = 3_600_000;
const WARM_UP_SWEEPS = 3;

interface PerHour {
  githubInstallationCalls: number;
  githubAppCalls: number;
  storeReads: number;
  storeWrites: number;
  kubeRequests: number;
  kubeObjectsRead: number;
  /**
   * kubeObjectsRead plus the hour's share of the slow full relist (every EphemeralRunner, pod and
   * node, every FULL_RELIST_MS), which an hour played may or may not hold: measured on the
   * warm-up's first list. The target is read on this figure.
   */
  kubeObjectsReadWithRelist: number;
  invocations: Record<SteadyFunction, number>;
  busySeconds: Record<SteadyFunction, number>;
}

interface SteadyWorldReport {
  runners: number;
  registeredRunners: number;
  repositories: number;
  jobsPerHour: number;
  /** Jobs runners took in the minutes measured (the warm-up's not counted). */
  jobsStarted: number;
  /** Simulated minutes played; per-hour figures are scaled to 60 when fewer. */
  minutesPlayed: number;
  perHour: PerHour;
  /** [quiet]'s targets for this world's hour, and whether each figure is within its target. */
  targets: Record<string, { target: number; value: number; within: boolean }>;
  /** The installation's calls per hour by route (ids folded to `N`), most first. */
  githubInstallationCallsByRoute: Record<string, number>;
  /** Kubernetes objects read per hour by request (namespaces and names folded), most first. */
  kubeObjectsReadByRequest: Record<string, number>;
  /** The item kinds written most, per hour (`pk` prefix / `sk` prefix). */
  storeWritesByKind: Record<string, number>;
  /** Items read by kind, per hour, the 30 largest. */
  storeReadsByKind: Record<string, number>;
  errors: string[];
}

interface SteadyReport {
  sweepEveryMs: number;
  worlds: SteadyWorldReport[];
  exponents: Record<string, number>;
}

/** The deployed schedule: serverless.yml's `sweepRate` (`rate(N minute[s])`). */
function deployedSweepMs(): number {
  const yml = readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8');
  const m = /sweepRate:\s*rate\((\d+)\s+(minute|minutes|hour|hours)\)/.exec(yml);
  if (!m) throw new Error('serverless.yml names no sweepRate: rate(N minutes)');
  return Number(m[1]) * (m[2]?.startsWith('hour') ? HOUR_MS : 60_000);
}

async function runSteadyBench(runners: number[], minutes = 60): Promise<SteadyReport> {
  const sweepEveryMs = deployedSweepMs();
  // The handlers' metric lines (EMF on stdout) would fill the bench's own output.
  const metricsWere = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const worlds: SteadyWorldReport[] = [];
  for (const n of runners) {
    const world = new SteadyWorld({
      runners: n,
      repositories: 1_000,
      jobsPerHour: 2_000,
      clusters: 2,
      namespaces: 100,
    });
    await world.start();
    await world.populate();
    const beforeWarmUp = world.kubeMark();
    // A deployment's first sweeps learn the world (every runner, pod and node listed, each pod
    // noted on its node): not steady. At 50,000 runners the first pass outlasts one sweep's
    // time and resumes in the next, so three sweeps are played before the hour is measured.
    await world.play(WARM_UP_SWEEPS * sweepEveryMs, sweepEveryMs);
    const fullList = objectsRead(world, beforeWarmUp);
    worlds.push(await playHour(world, sweepEveryMs, minutes, fullList));
    await world.stop();
  }
  if (metricsWere === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
  else process.env.POWERTOOLS_METRICS_DISABLED = metricsWere;
  return { sweepEveryMs, worlds, exponents: exponents(worlds) };
}

async function playHour(
  world: SteadyWorld,
  sweepEveryMs: number,
  minutes: number,
  fullList: number,
): Promise<SteadyWorldReport> {
  const size: SteadySize = world.size;
  const github = world.githubMark();
  const kube = world.kubeMark();
  const reads = world.store.reads;
  const writes = world.store.writes;
  const writesByKind = new Map(world.store.writesByKind);
  const readsByKind = new Map(world.store.readsByKind);
  const jobsBefore = world.jobsStarted;
  await world.play(minutes * 60_000, sweepEveryMs);
  const scale = 60 / minutes;
  const per = (n: number) => Math.round(n * scale);
  const calls = world.github.requests().slice(github);
  const kubeRequests = medicRequestsSince(world, kube);
  const kubeObjectsRead = per(kubeRequests.reduce((sum, r) => sum + (r.objects ?? 0), 0));
  const fns = Object.keys(world.invocations) as SteadyFunction[];
  const perHour: PerHour = {
    githubInstallationCalls: per(calls.filter((r) => r.by === 'runner-medic').length),
    githubAppCalls: per(calls.filter((r) => r.by === 'app').length),
    storeReads: per(world.store.reads - reads),
    storeWrites: per(world.store.writes - writes),
    kubeRequests: per(kubeRequests.length),
    kubeObjectsRead,
    kubeObjectsReadWithRelist: kubeObjectsRead + Math.round((fullList * HOUR_MS) / FULL_RELIST_MS),
    invocations: Object.fromEntries(fns.map((f) => [f, per(world.invocations[f])])) as Record<
      SteadyFunction,
      number
    >,
    busySeconds: Object.fromEntries(
      fns.map((f) => [f, Math.round((world.busyMs[f] / 1000) * scale * 10) / 10]),
    ) as Record<SteadyFunction, number>,
  };
  return {
    runners: size.runners,
    registeredRunners: world.registeredRunners(),
    repositories: size.repositories,
    jobsPerHour: size.jobsPerHour,
    jobsStarted: world.jobsStarted - jobsBefore,
    minutesPlayed: minutes,
    perHour,
    targets: targetsOf(size, perHour),
    githubInstallationCallsByRoute: countBy(
      calls.filter((r) => r.by === 'runner-medic'),
      (r) => `${r.method} ${r.path.split('?')[0]?.replace(/\/\d+/g, '/N')}`,
      per,
    ),
    kubeObjectsReadByRequest: countBy(
      kubeRequests,
      (r) => `${r.method} ${kubeRoute(r.path)}`,
      per,
      (r) => r.objects ?? 0,
    ),
    storeWritesByKind: byKindSince(world.store.writesByKind, writesByKind, per),
    storeReadsByKind: byKindSince(world.store.readsByKind, readsByKind, per),
    errors: world.errors.slice(0, 10),
  };
}

/** runner-medic's requests to the clusters since a mark. */
const medicRequestsSince = (world: SteadyWorld, mark: number[]) =>
  world.kubes.flatMap((k, c) =>
    k.audit.requests.slice(mark[c] ?? 0).filter((r) => r.by === 'runner-medic'),
  );

const objectsRead = (world: SteadyWorld, mark: number[]) =>
  medicRequestsSince(world, mark).reduce((sum, r) => sum + (r.objects ?? 0), 0);

/** The targets for an hour (jobs: the world's jobs an hour). */
function targetsOf(size: SteadySize, perHour: PerHour): SteadyWorldReport['targets'] {
  const check = (target: number, value: number) => ({ target, value, within: value <= target });
  return {
    githubInstallationCalls: check(250, perHour.githubInstallationCalls),
    githubAppCalls: check(250, perHour.githubAppCalls),
    storeWrites: check(10 * size.jobsPerHour + 1_000, perHour.storeWrites),
    kubeObjectsRead: check(size.runners + 20 * size.jobsPerHour, perHour.kubeObjectsReadWithRelist),
    'busySeconds.reconcile': check(360, perHour.busySeconds.reconcile),
  };
}

/** Counts by item kind since a mark, the 30 largest first. */
function byKindSince(
  now: ReadonlyMap<string, number>,
  mark: ReadonlyMap<string, number>,
  scale: (n: number) => number,
): Record<string, number> {
  return Object.fromEntries(
    [...now]
      .map(([kind, n]) => [kind, scale(n - (mark.get(kind) ?? 0))] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 30),
  );
}

/** A Kubernetes request's path with its namespace and object name folded, and its watch flag. */
function kubeRoute(path: string): string {
  const [route = '', query = ''] = path.split('?');
  const folded = route
    .replace(/\/namespaces\/[^/]+/, '/namespaces/*')
    .replace(/^(.*\/(?:pods|ephemeralrunners|nodes|events))\/[^/]+/, '$1/{name}');
  return /(^|&)watch=(1|true)/.test(query) ? `${folded} (watch)` : folded;
}

function countBy<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  scale: (n: number) => number,
  weight: (item: T) => number = () => 1,
): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + weight(item));
  return Object.fromEntries(
    [...counts].map(([k, n]) => [k, scale(n)] as const).sort((a, b) => b[1] - a[1]),
  );
}

/** log(f(largest)/f(smallest)) / log(runners(largest)/runners(smallest)), per figure. */
function exponents(worlds: SteadyWorldReport[]): Record<string, number> {
  const sorted = [...worlds].sort((a, b) => a.runners - b.runners);
  const small = sorted[0];
  const large = sorted[sorted.length - 1];
  const out: Record<string, number> = {};
  if (!small || !large || small.runners === large.runners) return out;
  const growth = Math.log(large.runners / small.runners);
  const exp = (a: number, b: number) =>
    Math.round((Math.log(Math.max(b, 1) / Math.max(a, 1)) / growth) * 100) / 100;
  const flat = (w: SteadyWorldReport): Record<string, number> => {
    const { invocations, busySeconds, ...rest } = w.perHour;
    return {
      ...rest,
      ...Object.fromEntries(Object.entries(invocations).map(([f, n]) => [`invocations.${f}`, n])),
      ...Object.fromEntries(Object.entries(busySeconds).map(([f, s]) => [`busySeconds.${f}`, s])),
    };
  };
  const a = flat(small);
  const b = flat(large);
  for (const [k, v] of Object.entries(a)) out[k] = exp(v, b[k] ?? 0);
  return out;
}

/**
 * `--steady-runners=1000,10000`: these worlds; `--steady-minutes=N`: play N simulated minutes
 * and scale to the hour (by default 5, with `--full` the whole hour).
 */
export const steadySection: BenchSection = async ({ args, full, asJson }) => {
  const runners = listArg(args, 'steady-runners') ?? (full ? STEADY_RUNNERS_FULL : STEADY_RUNNERS);
  const minutes = listArg(args, 'steady-minutes')?.[0] ?? (full ? 60 : STEADY_MINUTES);
  const report = await runSteadyBench(runners, minutes);
  if (asJson) return report;
  console.log(`steady: one hour, a sweep every ${report.sweepEveryMs / 1000} s`);
  for (const w of report.worlds) console.log(`  ${JSON.stringify(w)}`);
  console.log(`steady: growth exponents against runners ${JSON.stringify(report.exponents)}`);
  return report;
};
