import type { SimCluster } from '../../../sim/kube/index.js';
import type { EphemeralRunner, EphemeralRunnerSet } from '../../../sim/kube/types.js';
import { latestPatchId } from '../../../sim/kube/arc/ephemeral-runner-set-controller.js';
import { arcCluster, NS, SET } from './helpers.js';

const live = (cluster: SimCluster) =>
  cluster.ephemeralRunners(NS).filter((e) => !e.metadata.deletionTimestamp);

const ersOf = (cluster: SimCluster) =>
  cluster.api.all<EphemeralRunnerSet>('ephemeralrunnersets', NS)[0] as EphemeralRunnerSet;

/** Two busy runners; returns the name of one. */
async function twoBusy(cluster: SimCluster): Promise<string> {
  cluster.actions.queueJob(SET, { durationMs: 30 * 60_000 });
  cluster.actions.queueJob(SET, { durationMs: 30 * 60_000 });
  await cluster.runUntil(
    () => cluster.actions.jobs.filter((j) => j.status === 'in_progress').length === 2,
  );
  await cluster.advance(2_000);
  return live(cluster)[0]?.metadata.name as string;
}

/** Deletes an ER as runner-medic would; returns how long until the ERS created a replacement. */
async function replacementDelay(cluster: SimCluster, name: string): Promise<number> {
  const before = new Set(cluster.ephemeralRunners(NS).map((e) => e.metadata.name));
  cluster.api.delete('runner-medic', 'ephemeralrunners', NS, name);
  return cluster.runUntil(
    () => cluster.ephemeralRunners(NS).some((e) => !before.has(e.metadata.name)),
    { stepMs: 100, maxMs: 120_000 },
  );
}

describe('ARC fidelity: the ERS patch-ID gate', () => {
  it('reads the newest patch-id among the runners, deleting ones included', () => {
    const er = (id: string | undefined, deleting = false) =>
      ({
        metadata: {
          annotations: id === undefined ? {} : { 'actions.github.com/patch-id': id },
          ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
        },
      }) as unknown as EphemeralRunner;
    expect(latestPatchId([er('3'), er('7', true), er(undefined), er('x')])).toBe(7);
    expect(latestPatchId([])).toBe(0);
  });

  it('without the gate a deleted runner is replaced at once; with it, at the listener’s next batch', async () => {
    const open = await arcCluster({ arcVersion: '0.13', seed: 5 });
    const fast = await replacementDelay(open, await twoBusy(open));
    await open.stop();

    const gated = await arcCluster({ arcVersion: '0.13', seed: 5, arc: { patchIdGate: true } });
    const name = await twoBusy(gated);
    const patchID = ersOf(gated).spec.patchID;
    const slow = await replacementDelay(gated, name);
    expect(fast).toBeLessThan(1_000);
    // The next batch is the empty long poll: up to 50 s after the previous one.
    expect(slow).toBeGreaterThan(5_000);
    expect(slow).toBeLessThanOrEqual(50_000 + 1_000);
    expect(ersOf(gated).spec.patchID).not.toBe(patchID);
    expect(
      gated.logs.some((l) => l.message === 'Patch already handled; waiting for the next batch'),
    ).toBe(true);
    await gated.stop();
  });

  it('the empty long poll is a setting', async () => {
    const cluster = await arcCluster({
      arcVersion: '0.9',
      seed: 5,
      arc: { patchIdGate: true },
      timings: { listenerEmptyBatchMs: 10_000 },
    });
    const delay = await replacementDelay(cluster, await twoBusy(cluster));
    expect(delay).toBeGreaterThan(1_000);
    expect(delay).toBeLessThanOrEqual(11_000);
    await cluster.stop();
  });
});

describe('ARC fidelity: 0.13 lets go of an ER before its pod is gone', () => {
  async function idleRunnerOnDeadNode(releaseFinalizerBeforePodGone: boolean) {
    const cluster = await arcCluster({
      arcVersion: '0.13',
      minRunners: 1,
      arc: { releaseFinalizerBeforePodGone },
    });
    await cluster.advance(10_000);
    const er = live(cluster)[0] as EphemeralRunner;
    const name = er.metadata.name as string;
    cluster.faults.powerOffNode('node-a');
    await cluster.advance(1_000);
    cluster.api.delete('runner-medic', 'ephemeralrunners', NS, name);
    await cluster.advance(10 * 60_000);
    return { cluster, name };
  }

  it('0.13.1: the ER disappears while its pod stays Terminating on the dead node', async () => {
    const { cluster, name } = await idleRunnerOnDeadNode(true);
    expect(cluster.ephemeralRunner(NS, name)).toBeUndefined();
    const pod = cluster.pod(NS, name);
    expect(pod?.metadata.deletionTimestamp).toBeDefined();
    expect(pod?.status?.phase).toBe('Running');
    expect(cluster.api.tryGet('secrets', NS, name)).toBeUndefined();
    await cluster.stop();
  });

  it('as 0.9.3 does (and the default for now): the ER waits for its pod', async () => {
    const { cluster, name } = await idleRunnerOnDeadNode(false);
    expect(cluster.ephemeralRunner(NS, name)?.metadata.finalizers).toEqual([
      'ephemeralrunner.actions.github.com/finalizer',
    ]);
    await cluster.stop();
  });
});

describe("ARC fidelity: '0.15'", () => {
  it('Running means "took a job"; the ERS and ARS status carry no counts', async () => {
    const cluster = await arcCluster({ arcVersion: '0.15', minRunners: 1 });
    await cluster.advance(15_000);
    const idle = live(cluster)[0] as EphemeralRunner;
    expect(cluster.pod(NS, idle.metadata.name as string)?.status?.phase).toBe('Running');
    expect(idle.status?.phase).toBe('Pending');
    expect(idle.metadata.annotations?.['actions.github.com/patch-id']).toBeDefined();
    cluster.actions.queueJob(SET, { durationMs: 60_000 });
    await cluster.advance(10_000);
    const busy = cluster.ephemeralRunners(NS).filter((e) => e.status?.jobId);
    expect(busy.map((e) => e.status?.phase)).toEqual(['Running']);
    expect(ersOf(cluster).status).toEqual({ phase: 'Running' });
    expect(
      (cluster.api.all('autoscalingrunnersets', NS)[0] as { status?: unknown }).status,
    ).toEqual({ phase: 'Running' });
    expect(cluster.modelErrors).toEqual([]);
    await cluster.stop();
  });

  it('removes the registration finalizer first and retries RemoveRunner in the background every 30 s', async () => {
    const cluster = await arcCluster({ arcVersion: '0.15' });
    const name = await twoBusy(cluster);
    const runnerId = cluster.ephemeralRunner(NS, name)?.status?.runnerId as number;
    cluster.faults.powerOffNode(cluster.pod(NS, name)?.spec.nodeName as string);
    await cluster.advance(1_000);
    cluster.api.delete('runner-medic', 'ephemeralrunners', NS, name);
    await cluster.advance(2_000);
    // Gone from the cluster at once, while GitHub still holds the job.
    expect(cluster.ephemeralRunner(NS, name)).toBeUndefined();
    await cluster.advance(2 * 60_000);
    const retries = cluster.logs.filter(
      (l) =>
        l.message === 'Runner is still running the job. Re-queue in 30 seconds' &&
        l.fields?.ephemeralrunner === name,
    );
    expect(retries.length).toBeGreaterThanOrEqual(4);
    expect((retries[1]?.at ?? 0) - (retries[0]?.at ?? 0)).toBe(30_000);
    expect(cluster.actions.runnerRegistered(runnerId)).toBe(true);
    await cluster.stop();
  });

  it('a runner stuck in deletion holds its slot (scaleUpTotal counts deleting runners)', async () => {
    const stuck = async (version: '0.13' | '0.15') => {
      const cluster = await arcCluster({ arcVersion: version, maxRunners: 2 });
      const name = await twoBusy(cluster);
      cluster.api.modify<EphemeralRunner>('scenario', 'ephemeralrunners', NS, name, (er) => {
        er.metadata.finalizers = [...(er.metadata.finalizers ?? []), 'example.com/hold'];
      });
      cluster.api.delete('runner-medic', 'ephemeralrunners', NS, name);
      await cluster.advance(3 * 60_000);
      const count = live(cluster).length;
      await cluster.stop();
      return count;
    };
    expect(await stuck('0.13')).toBe(2);
    expect(await stuck('0.15')).toBe(1);
  });

  it('a pod refused at creation still leaves a Failed ER holding a slot', async () => {
    const cluster = await arcCluster({ arcVersion: '0.15', maxRunners: 1 });
    cluster.faults.denyPodCreation(() => true);
    cluster.actions.queueJob(SET);
    await cluster.advance(30_000);
    cluster.faults.denyPodCreation(undefined);
    await cluster.advance(10 * 60_000);
    const ers = cluster.ephemeralRunners(NS);
    expect(ers.map((e) => [e.status?.phase, e.status?.reason])).toEqual([['Failed', 'InvalidPod']]);
    await cluster.stop();
  });
});

describe('ARC fidelity: 0.9 details', () => {
  it('a runner that exits 0 while still registered has its pod restarted, then the ER is marked Failed', async () => {
    const cluster = await arcCluster({
      arcVersion: '0.9',
      minRunners: 1,
      minimumRunnerVersion: '2.329.0',
      scaleSet: { runnerVersion: '2.320.0' },
    });
    await cluster.advance(5 * 60_000);
    const er = cluster.ephemeralRunners(NS)[0] as EphemeralRunner;
    expect(er.status).toMatchObject({ phase: 'Failed', reason: 'TooManyPodFailures' });
    expect(Object.keys(er.status?.failures ?? {}).length).toBe(6);
    expect(
      cluster.logs.some(
        (l) =>
          l.message ===
          'Ephemeral runner pod has finished, but the runner still exists in the service. Deleting the pod to restart it.',
      ),
    ).toBe(true);
    // A Failed ER's pod and JIT secret are cleaned up; the ER itself stays (and holds its slot).
    const name = er.metadata.name as string;
    expect(cluster.pod(NS, name)).toBeUndefined();
    expect(cluster.api.tryGet('secrets', NS, name)).toBeUndefined();
    await cluster.stop();
  });

  it('a pod creation refused with 403 marks the ER Failed/InvalidPod on 0.9 too', async () => {
    const cluster = await arcCluster({ arcVersion: '0.9', maxRunners: 1 });
    cluster.faults.denyPodCreation(() => true);
    cluster.actions.queueJob(SET);
    await cluster.advance(30_000);
    const er = cluster.ephemeralRunners(NS)[0] as EphemeralRunner;
    expect(er.status).toMatchObject({ phase: 'Failed', reason: 'InvalidPod' });
    expect(cluster.modelErrors).toEqual([]);
    await cluster.stop();
  });
});
