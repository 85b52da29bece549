import { execFileSync } from 'node:child_process';

/** Polls (real time) until `check` returns a value, for informers and watches over sockets. */
export async function eventually<T>(
  check: () => T | undefined | false,
  timeoutMs = 5_000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function kubectlPath(): string | undefined {
  try {
    return (
      execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

export function minimalPod(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'demo' } },
    spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    ...extra,
  };
}

import {
  SimCluster,
  type AddScaleSetOptions,
  type SimClusterOptions,
} from '../../../sim/kube/index.js';
import type { EphemeralRunner, Pod } from '../../../sim/kube/types.js';

export const NS = 'arc-runners';
export const SET = 'arc-runner-set';

/** A cluster with one node and one scale set (min 0, max 5), settled. */
export async function arcCluster(
  options: SimClusterOptions & {
    minRunners?: number;
    maxRunners?: number;
    podAnnotations?: Record<string, string>;
    /** More scale-set options (runner version, SIGTERM handling, ...). */
    scaleSet?: Partial<AddScaleSetOptions>;
  } = {},
): Promise<SimCluster> {
  const cluster = new SimCluster({ seed: 42, ...options });
  cluster.addNode({ name: 'node-a' });
  cluster.addScaleSet({
    name: SET,
    namespace: NS,
    minRunners: options.minRunners ?? 0,
    maxRunners: options.maxRunners ?? 5,
    podAnnotations: options.podAnnotations,
    ...options.scaleSet,
  });
  await cluster.advance(2_000);
  return cluster;
}

export function onlyRunner(cluster: SimCluster): EphemeralRunner {
  const ers = cluster.ephemeralRunners(NS).filter((e) => !e.metadata.deletionTimestamp);
  if (ers.length !== 1) throw new Error(`expected one live EphemeralRunner, found ${ers.length}`);
  return ers[0] as EphemeralRunner;
}

/** Queues a job and runs until a runner has started it; returns the runner's pod. */
export async function busyRunner(cluster: SimCluster): Promise<{ pod: Pod; jobId: number }> {
  const job = cluster.actions.queueJob(SET);
  await cluster.runUntil(
    () =>
      cluster.actions.job(job.jobId)?.status === 'in_progress' &&
      !!onlyRunner(cluster).status?.jobWorkflowRef,
  );
  const er = onlyRunner(cluster);
  return { pod: cluster.pod(NS, er.metadata.name as string) as Pod, jobId: job.jobId };
}

export function condition(pod: Pod | undefined, type: string) {
  return pod?.status?.conditions?.find((c) => c.type === type);
}
