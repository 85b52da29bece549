/**
 * The `scale` section of `npm run bench`: worlds of EphemeralRunners across 100 namespaces and
 * 2 clusters, with stored jobs, on the Kubernetes twins and dynalite. For each world: the cost of
 * one pod eviction, one `workflow_job.completed` webhook and one spot warning, and of one full
 * sweep; then the growth exponent of each figure between the smallest and the largest world.
 */
import { performance } from 'node:perf_hooks';
import { runEngine } from '../../functions/engine/run-engine.js';
import { SWEEP_RESERVE_MS } from '../../functions/engine/sweep.js';
import { measureEvent, type ScaleEvent } from './scale-events.js';
import { ScaleWorld, type WorldSize } from './scale-world.js';

export const DEFAULT_RUNNERS = [100, 1_000, 10_000, 50_000];
export const DEFAULT_JOBS = [1_000, 10_000, 100_000];
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

/** Worlds: each runner count with each job count (paired by index when the lists are as long). */
export function worldsOf(runners: number[], jobs: number[]): WorldSize[] {
  const out: WorldSize[] = [];
  for (const r of runners)
    for (const j of jobs)
      out.push({ ephemeralRunners: r, storedJobs: j, clusters: 2, namespaces: 100 });
  return out;
}

export async function runScaleBench(worlds: WorldSize[]): Promise<ScaleReport> {
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
