/**
 * The `scale` section of `npm run bench`: worlds of EphemeralRunners across 100 namespaces and
 * 2 clusters, with stored jobs, on the Kubernetes twins and dynalite. For each world: the cost of
 * one pod eviction, one `workflow_job.completed` webhook and one spot warning, and of one full
 * sweep; then the growth exponent of each figure between the smallest and the largest world.
 * By default up to 10,000 runners and 10,000 stored jobs; `--full` adds 50,000 runners and
 * 100,000 stored jobs (tens of minutes on 2 cores).
 */
import { performance } from 'node:perf_hooks';
import { runEngine } from '../../functions/engine/run-engine.js';
import { SWEEP_RESERVE_MS } from '../../functions/engine/sweep.js';
import { measureEvent, type ScaleEvent } from './scale-events.js';
import { ScaleWorld, type WorldSize } from './scale-world.js';
import { listArg, type BenchSection } from './section.js';

const RUNNERS = { default: [100, 1_000, 10_000], full: [100, 1_000, 10_000, 50_000] };
const JOBS = { default: [1_000, 10_000], full: [1_000, 10_000, 100_000] };
const LAMBDA_TIMEOUT_MS = 120_000;
const EVENTS: ScaleEvent[] = ['pod-eviction', 'workflow_job.completed', 'spot-warning'];

export interface ScaleReport {
  perEvent: {
    world: WorldSize;
    event: ScaleEvent;
    wallMs: number;
    storeReads: number;
    storeBytes: number;
    kubeCalls: number;
    kubeLists: number;
    kubeClusterWideLists: number;
    githubCalls: number;
  }[];
  sweep: {
    world: WorldSize;
    wallMs: number;
    rssMb: number;
    listCalls: number;
    pages: number;
    githubCalls: number;
    invocations: number;
  }[];
  exponents: Record<string, number>;
}

/** Worlds: each runner count with each job count. */
function worldsOf(runners: number[], jobs: number[]): WorldSize[] {
  const out: WorldSize[] = [];
  for (const r of runners)
    for (const j of jobs)
      out.push({ ephemeralRunners: r, storedJobs: j, clusters: 2, namespaces: 100 });
  return out;
}

async function runScaleBench(worlds: WorldSize[]): Promise<ScaleReport> {
  const report: ScaleReport = { perEvent: [], sweep: [], exponents: {} };
  for (const size of worlds) {
    const world = new ScaleWorld(size);
    await world.start();
    await world.populate();
    // One full sweep, as the first after a deployment.
    let peak = process.memoryUsage().rss;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const kube = world.kubeMark();
    const github = world.githubMark();
    const t0 = performance.now();
    await runEngine({ kind: 'sweep' }, world.deps);
    const wallMs = performance.now() - t0;
    clearInterval(timer);
    const k = world.kubeSince(kube);
    const lists = k.requests.filter((r) => r.verb === 'list');
    report.sweep.push({
      world: size,
      wallMs: Math.round(wallMs),
      rssMb: Math.round(peak / 2 ** 20),
      listCalls: new Set(lists.map((r) => r.path.split('?')[0])).size,
      pages: lists.length,
      githubCalls: world.githubSince(github),
      invocations: Math.max(1, Math.ceil(wallMs / (LAMBDA_TIMEOUT_MS - SWEEP_RESERVE_MS))),
    });
    for (const event of EVENTS) {
      const cost = await measureEvent(world, event, Math.floor(size.ephemeralRunners / 2) + 3);
      report.perEvent.push({ world: size, ...cost });
    }
    await world.stop();
  }
  report.exponents = exponents(report, worlds);
  return report;
}

/** log(f(large)/f(small)) / log(size(large)/size(small)), sizes in runners + stored jobs. */
function exponents(report: ScaleReport, worlds: WorldSize[]): Record<string, number> {
  const out: Record<string, number> = {};
  const weight = (w: WorldSize) => w.ephemeralRunners + w.storedJobs;
  const sorted = [...worlds].sort((a, b) => weight(a) - weight(b));
  const small = sorted[0];
  const large = sorted[sorted.length - 1];
  if (!small || !large || weight(small) === weight(large)) return out;
  const growth = Math.log(weight(large) / weight(small));
  const exp = (a: number, b: number) =>
    Math.round((Math.log(Math.max(b, 1) / Math.max(a, 1)) / growth) * 100) / 100;
  for (const event of EVENTS) {
    const at = (w: WorldSize) => report.perEvent.find((p) => p.world === w && p.event === event);
    const a = at(small);
    const b = at(large);
    if (!a || !b) continue;
    for (const f of ['wallMs', 'storeReads', 'storeBytes', 'kubeCalls', 'githubCalls'] as const)
      out[`${event}.${f}`] = exp(a[f], b[f]);
  }
  const sa = report.sweep.find((s) => s.world === small);
  const sb = report.sweep.find((s) => s.world === large);
  if (sa && sb)
    for (const f of ['wallMs', 'rssMb', 'pages', 'githubCalls', 'invocations'] as const)
      out[`sweep.${f}`] = exp(sa[f], sb[f]);
  return out;
}

/**
 * `--scale-runners=100,1000 --scale-jobs=1000`: each runner count with each job count;
 * `--scale-worlds=100x1000,50000x100000`: exactly these worlds (runners x stored jobs).
 */
function worldsAsked(args: readonly string[], full: boolean): WorldSize[] {
  const paired = args
    .find((a) => a.startsWith('--scale-worlds='))
    ?.split('=')[1]
    ?.split(',')
    .map((w) => w.split('x').map(Number));
  if (paired)
    return paired.map(([r = 0, j = 0]) => ({
      ephemeralRunners: r,
      storedJobs: j,
      clusters: 2,
      namespaces: 100,
    }));
  const sizes = full ? 'full' : 'default';
  return worldsOf(
    listArg(args, 'scale-runners') ?? RUNNERS[sizes],
    listArg(args, 'scale-jobs') ?? JOBS[sizes],
  );
}

export const scaleSection: BenchSection = async ({ args, full, asJson }) => {
  const scale = await runScaleBench(worldsAsked(args, full));
  if (asJson) return scale;
  console.log('scale: per event');
  for (const p of scale.perEvent)
    console.log(
      `  ${String(p.world.ephemeralRunners).padStart(6)} runners ${String(p.world.storedJobs).padStart(7)} jobs  ${p.event.padEnd(24)} ${String(p.wallMs).padStart(8)} ms  ${p.storeReads} items ${p.storeBytes} B  kube ${p.kubeCalls} (lists ${p.kubeLists}, cluster-wide ${p.kubeClusterWideLists})  github ${p.githubCalls}`,
    );
  console.log('scale: sweep');
  for (const w of scale.sweep)
    console.log(
      `  ${String(w.world.ephemeralRunners).padStart(6)} runners ${String(w.world.storedJobs).padStart(7)} jobs  ${w.wallMs} ms  ${w.rssMb} MB  lists ${w.listCalls} pages ${w.pages}  github ${w.githubCalls}  invocations ${w.invocations}`,
    );
  console.log(`scale: growth exponents ${JSON.stringify(scale.exponents)}`);
  return scale;
};
