import {
  SHUTDOWN_SIGNAL_MESSAGE,
  SimCluster,
  type AddScaleSetOptions,
  type Node,
  type Pod,
} from '../../../sim/kube/index.js';
import { runnerBehaviourFor, versionBelow } from '../../../sim/kube/models/runner-behaviour.js';

const NS = 'arc-runners';
const SET = 'arc-runner-set';

async function clusterWith(
  scaleSet: Partial<AddScaleSetOptions> = {},
  options: ConstructorParameters<typeof SimCluster>[0] = {},
): Promise<SimCluster> {
  const cluster = new SimCluster({ seed: 11, ...options });
  cluster.addNode({ name: 'node-a' });
  cluster.addNode({ name: 'node-b' });
  cluster.addScaleSet({ name: SET, namespace: NS, minRunners: 0, maxRunners: 3, ...scaleSet });
  await cluster.advance(2_000);
  return cluster;
}

/** Queues a job (lasting `durationMs`) and runs until a runner took it; returns its pod name. */
async function startJob(cluster: SimCluster, durationMs?: number) {
  const job = cluster.actions.queueJob(SET, durationMs !== undefined ? { durationMs } : {});
  await cluster.runUntil(() => cluster.actions.job(job.jobId)?.status === 'in_progress');
  const runner = cluster.actions.job(job.jobId)?.runnerName as string;
  return { jobId: job.jobId, pod: runner };
}

const stopped = (cluster: SimCluster, runner: string) =>
  cluster.actions.runners.get(runner)?.stopped;

/** The pod with this name and uid is gone (ARC may re-create one under the same name). */
function goneFn(cluster: SimCluster, name: string): () => boolean {
  const uid = cluster.pod(NS, name)?.metadata.uid;
  return () => cluster.pod(NS, name)?.metadata.uid !== uid;
}

describe('pod deletion: SIGTERM, then SIGKILL after terminationGracePeriodSeconds', () => {
  it('default: the runner fails its job with the shutdown signal at once (a graceful loss)', async () => {
    const cluster = await clusterWith({ terminationGracePeriodSeconds: 60 });
    const { jobId, pod } = await startJob(cluster, 5 * 60_000);
    const gone = goneFn(cluster, pod);
    cluster.faults.terminatePod(NS, pod);
    await cluster.advance(1_000);
    expect(cluster.actions.job(jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      failureMessage: SHUTDOWN_SIGNAL_MESSAGE,
    });
    expect(stopped(cluster, pod)).toBe('sigterm');
    await cluster.advance(2_000);
    expect(gone()).toBe(true);
    await cluster.stop();
  });

  it('graceful-stop: a job that ends inside the grace period completes success; the pod goes when it ends', async () => {
    const cluster = await clusterWith({
      terminationGracePeriodSeconds: 120,
      onSigterm: 'graceful-stop',
      gracefulStopTimeoutSeconds: 100,
    });
    const template = cluster.api.all('autoscalingrunnersets', NS)[0] as unknown as {
      spec: { template: { spec: Pod['spec'] } };
    };
    expect(template.spec.template.spec.containers[0]?.command).toEqual([
      '/home/runner/graceful-stop/graceful-stop.sh',
    ]);
    const { jobId, pod } = await startJob(cluster, 40_000);
    const gone = goneFn(cluster, pod);
    const at = cluster.clock.now();
    cluster.faults.terminatePod(NS, pod);
    await cluster.advance(20_000);
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    expect(cluster.pod(NS, pod)?.metadata.deletionTimestamp).toBeDefined();
    await cluster.runUntil(gone, { stepMs: 100 });
    expect(cluster.actions.job(jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'success',
    });
    expect(stopped(cluster, pod)).toBe('completed');
    // Gone when the job ended (~40 s after it started), well before the 120 s SIGKILL.
    expect(cluster.clock.now() - at).toBeLessThan(60_000);
    await cluster.stop();
  });

  it('graceful-stop: an idle runner exits promptly with 0', async () => {
    const cluster = await clusterWith({ minRunners: 1, onSigterm: 'graceful-stop' });
    await cluster.advance(10_000);
    const pod = cluster.pods(NS)[0] as Pod;
    const name = pod.metadata.name as string;
    const gone = goneFn(cluster, name);
    const seen: Pod[] = [];
    cluster.api.store.subscribe((ev) => {
      if (ev.resource === 'pods' && ev.object.metadata.uid === pod.metadata.uid)
        seen.push(structuredClone(ev.object) as Pod);
    });
    cluster.faults.terminatePod(NS, name);
    await cluster.advance(1_500);
    expect(gone()).toBe(true);
    const last = seen[seen.length - 1];
    expect(last?.status?.containerStatuses?.[0]?.state.terminated?.exitCode).toBe(0);
    await cluster.stop();
  });

  it('graceful-stop: a job longer than the stop timeout is stopped by the runner (a graceful loss)', async () => {
    const cluster = await clusterWith({
      terminationGracePeriodSeconds: 60,
      onSigterm: 'graceful-stop',
      gracefulStopTimeoutSeconds: 45,
    });
    const { jobId, pod } = await startJob(cluster, 10 * 60_000);
    cluster.faults.terminatePod(NS, pod);
    await cluster.advance(44_000);
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.advance(2_000);
    expect(cluster.actions.job(jobId)).toMatchObject({
      conclusion: 'failure',
      failureMessage: SHUTDOWN_SIGNAL_MESSAGE,
    });
    expect(stopped(cluster, pod)).toBe('sigterm');
    await cluster.stop();
  });

  it('graceful-stop with a timeout past the grace period: SIGKILL first, a hard loss', async () => {
    const cluster = await clusterWith({
      terminationGracePeriodSeconds: 30,
      onSigterm: 'graceful-stop',
      gracefulStopTimeoutSeconds: 45,
    });
    const { jobId, pod } = await startJob(cluster, 10 * 60_000);
    const gone = goneFn(cluster, pod);
    cluster.faults.terminatePod(NS, pod);
    await cluster.advance(31_000);
    expect(stopped(cluster, pod)).toBe('killed');
    expect(gone()).toBe(true);
    // GitHub still holds the job until the lost-runner lock lapses.
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.stop();
  });

  it('none: the runner ignores SIGTERM, keeps its job, and is SIGKILLed at the end of the grace period', async () => {
    const cluster = await clusterWith({ terminationGracePeriodSeconds: 30, onSigterm: 'none' });
    const { jobId, pod } = await startJob(cluster, 10 * 60_000);
    const gone = goneFn(cluster, pod);
    cluster.faults.terminatePod(NS, pod);
    await cluster.advance(29_000);
    expect(stopped(cluster, pod)).toBeUndefined();
    expect(cluster.pod(NS, pod)?.status?.phase).toBe('Running');
    await cluster.advance(2_000);
    expect(stopped(cluster, pod)).toBe('killed');
    expect(gone()).toBe(true);
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.stop();
  });

  it('a hard kill of one pod (SIGKILL, no grace) is distinct from a graceful termination', async () => {
    const cluster = await clusterWith();
    const { jobId, pod } = await startJob(cluster, 10 * 60_000);
    cluster.faults.killPod(NS, pod);
    await cluster.advance(1_000);
    expect(stopped(cluster, pod)).toBe('killed');
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.stop();
  });
});

describe('scenario operations in the cluster twin', () => {
  it('a node whose kubelet stops reporting goes Ready=Unknown while its pods stay Running', async () => {
    const cluster = await clusterWith({ nodeSelector: { 'kubernetes.io/hostname': 'node-b' } });
    const { jobId, pod } = await startJob(cluster, 120_000);
    expect(cluster.pod(NS, pod)?.spec.nodeName).toBe('node-b');
    cluster.faults.nodeNotReady('node-b');
    await cluster.advance(45_000);
    const node = cluster.nodes().find((n) => n.metadata.name === 'node-b');
    expect(node?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
    });
    expect(cluster.pod(NS, pod)?.status?.phase).toBe('Running');
    // The runner never noticed: its job completes.
    await cluster.advance(80_000);
    expect(cluster.actions.job(jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'success',
    });
    expect(cluster.pod(NS, pod)?.status?.phase).toBe('Running');
    await cluster.stop();
  });

  it('nodeSelector pins runners to a named node; with no room there they stay Pending', async () => {
    const cluster = await clusterWith({ nodeSelector: { 'kubernetes.io/hostname': 'node-a' } });
    await startJob(cluster);
    await startJob(cluster);
    expect(new Set(cluster.pods(NS).map((p) => p.spec.nodeName))).toEqual(new Set(['node-a']));
    cluster.api.modify<Node>(
      'scenario',
      'nodes',
      undefined,
      'node-a',
      (n) => void (n.spec.unschedulable = true),
    );
    cluster.actions.queueJob(SET);
    await cluster.advance(10_000);
    const pending = cluster.pods(NS).filter((p) => !p.spec.nodeName);
    expect(pending).toHaveLength(1);
    await cluster.stop();
  });

  it('a spot node without Karpenter: the instance is reclaimed and the cloud controller deletes the node', async () => {
    const cluster = new SimCluster({ seed: 5 });
    cluster.addNode({ name: 'spot-1', karpenter: false, capacityType: 'spot' });
    cluster.addScaleSet({ name: SET, namespace: NS, maxRunners: 2 });
    await cluster.advance(2_000);
    const { jobId, pod } = await startJob(cluster, 30 * 60_000);
    cluster.faults.spotInterruption('spot-1');
    await cluster.advance(119_000);
    expect(cluster.pod(NS, pod)?.status?.phase).toBe('Running');
    expect(cluster.api.all('events').filter((e) => e.reason === 'SpotInterrupted')).toHaveLength(0);
    await cluster.advance(100_000);
    expect(stopped(cluster, pod)).toBe('killed');
    expect(cluster.nodes().map((n) => n.metadata.name)).not.toContain('spot-1');
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.stop();
  });
});

describe('runner deprecation', () => {
  it('a runner below the minimum version exits 0 at start, takes no job, and ARC re-creates its pod', async () => {
    const cluster = await clusterWith(
      { runnerVersion: '2.328.0', minRunners: 1 },
      { minimumRunnerVersion: '2.329.0' },
    );
    const job = cluster.actions.queueJob(SET);
    await cluster.advance(60_000);
    expect(cluster.actions.job(job.jobId)?.status).toBe('queued');
    const created = cluster.audit.entries.filter(
      (e) => e.by === 'arc' && e.verb === 'create' && e.resource === 'pods' && e.code === 201,
    );
    expect(created.length).toBeGreaterThan(2);
    expect(cluster.logs.some((l) => l.message === 'Runner version is deprecated; exiting')).toBe(
      true,
    );
    await cluster.stop();
  });

  it('compares versions numerically; a tag that is not a version is never deprecated', () => {
    expect(versionBelow('2.328.0', '2.329.0')).toBe(true);
    expect(versionBelow('2.330.0', '2.329.0')).toBe(false);
    expect(versionBelow('2.99.0', '2.329.0')).toBe(true);
    expect(versionBelow('latest', '2.329.0')).toBe(false);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          {
            name: 'runner',
            image: 'ghcr.io/actions/actions-runner:2.330.0',
            command: ['/bin/bash', '/scripts/graceful-stop.sh'],
            env: [{ name: 'RUNNER_GRACEFUL_STOP_TIMEOUT', value: '90' }],
          },
        ],
      },
    } as Pod;
    expect(runnerBehaviourFor(pod, undefined, '2.329.0')).toEqual({
      onSigterm: 'graceful-stop',
      stopTimeoutMs: 90_000,
    });
    expect(runnerBehaviourFor(pod, { onSigterm: 'none' }, undefined).onSigterm).toBe('none');
  });
});
