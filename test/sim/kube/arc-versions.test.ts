import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { EphemeralRunnerSet } from '../../../sim/kube/types.js';
import { arcCluster, busyRunner, NS, onlyRunner, SET } from './helpers.js';

const ersStatus = (cluster: Awaited<ReturnType<typeof arcCluster>>) =>
  (cluster.api.all<EphemeralRunnerSet>('ephemeralrunnersets', NS)[0] as EphemeralRunnerSet).status;

describe('ARC 0.9: the seed bug', () => {
  it('an admission-rejected runner pod is never retried, holds its slot, and the next job waits for ever', async () => {
    const cluster = await arcCluster({ arcVersion: '0.9', maxRunners: 1 });
    const job = cluster.actions.queueJob(SET);
    await cluster.runUntil(() => cluster.pods(NS).length === 1);
    const name = cluster.pods(NS)[0]?.metadata.name as string;
    cluster.faults.admissionReject(NS, name, 'DiskPressure');
    await cluster.advance(60 * 60_000);

    const pod = cluster.pod(NS, name);
    expect(pod?.status).toMatchObject({
      phase: 'Failed',
      reason: 'Evicted',
      message: 'Pod was rejected: The node had condition: [DiskPressure]. ',
    });
    expect(pod?.status?.containerStatuses).toBeUndefined();
    expect(cluster.actions.job(job.jobId)?.status).toBe('queued');
    expect(ersStatus(cluster)?.currentReplicas).toBe(1);
    expect(
      cluster.logs.filter(
        (l) => l.message === 'Waiting for runner container status to be available',
      ).length,
    ).toBeGreaterThan(0);

    // The seed's workaround: delete the pod by hand; ARC re-creates it under the same name.
    cluster.api.delete('user', 'pods', NS, name);
    await cluster.runUntil(() => cluster.actions.job(job.jobId)?.status === 'in_progress');
    expect(cluster.pod(NS, name)?.status?.phase).toBe('Running');
  });

  it('a kubelet-evicted pod is re-created with the same JIT config; after 5 failures the ER is Failed for good and still counted', async () => {
    const cluster = await arcCluster({ arcVersion: '0.9', maxRunners: 1 });
    cluster.actions.queueJob(SET);
    await cluster.runUntil(() => cluster.pods(NS).some((p) => p.status?.phase === 'Running'));
    const er = onlyRunner(cluster);
    const name = er.metadata.name as string;
    for (let i = 0; i < 6; i++) {
      await cluster.runUntil(() => cluster.pod(NS, name)?.status?.phase === 'Running');
      cluster.faults.evictForNodePressure(NS, name, 'memory', { pressureMs: 0 });
      await cluster.advance(1_000);
    }
    await cluster.advance(60_000);
    const failed = cluster.ephemeralRunner(NS, name);
    expect(failed?.status).toMatchObject({
      phase: 'Failed',
      reason: 'TooManyPodFailures',
      message: 'Pod has failed to start more than 5 times',
      runnerId: er.status?.runnerId,
    });
    expect(Object.values(failed?.status?.failures ?? {})).toEqual(Array(6).fill(true));
    await cluster.advance(30 * 60_000);
    expect(cluster.ephemeralRunner(NS, name)?.status?.phase).toBe('Failed');
    expect(ersStatus(cluster)).toMatchObject({ currentReplicas: 1, failedEphemeralRunners: 1 });
    expect(cluster.ephemeralRunners(NS)).toHaveLength(1);
  });
});

describe("ARC 0.13: today's behaviour", () => {
  it('deletes an ER whose pod fails while it has a job; a replacement runner is created', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod, jobId } = await busyRunner(cluster);
    cluster.faults.evictForNodePressure(NS, pod.metadata.name as string, 'memory');
    await cluster.advance(5_000);
    // Deleted at once; the registration finalizer holds it until GitHub gives up on the job.
    expect(
      cluster.ephemeralRunner(NS, pod.metadata.name as string)?.metadata.deletionTimestamp,
    ).toBeDefined();
    expect(
      cluster.logs.some((l) =>
        l.message.startsWith('Ephemeral runner has a job assigned, but the pod has failed'),
      ),
    ).toBe(true);
    // The job is still assigned until GitHub notices the runner is gone, so ARC makes a new runner.
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    const replacement = onlyRunner(cluster);
    expect(replacement.metadata.name).not.toBe(pod.metadata.name);
    await cluster.advance(10 * 60_000);
    expect(cluster.actions.job(jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
    });
    expect(cluster.actions.job(jobId)?.failureMessage).toMatch(
      /lost communication with the server/,
    );
    await cluster.advance(60_000);
    expect(cluster.ephemeralRunner(NS, pod.metadata.name as string)).toBeUndefined();
  });

  it('re-creates the pod of an idle runner with backoff 0/5/10/20/40/80 s and deletes the ER after more than 5 failures', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13', minRunners: 1 });
    await cluster.runUntil(() => cluster.pods(NS).some((p) => p.status?.phase === 'Running'));
    const name = onlyRunner(cluster).metadata.name as string;
    const recreatedAfter: number[] = [];
    for (let i = 0; i < 6; i++) {
      await cluster.runUntil(() => cluster.pod(NS, name)?.status?.phase === 'Running', {
        stepMs: 100,
      });
      const uid = cluster.pod(NS, name)?.metadata.uid;
      cluster.faults.evictForNodePressure(NS, name, 'disk', { pressureMs: 0 });
      const t0 = cluster.clock.now();
      await cluster.runUntil(
        () =>
          !cluster.ephemeralRunner(NS, name) ||
          (!!cluster.pod(NS, name) && cluster.pod(NS, name)?.metadata.uid !== uid),
        { stepMs: 100, maxMs: 200_000 },
      );
      if (!cluster.ephemeralRunner(NS, name)) break;
      recreatedAfter.push(Math.round((cluster.clock.now() - t0) / 1000));
      const failures = cluster.ephemeralRunner(NS, name)?.status?.failures ?? {};
      expect(
        Object.values(failures).every((v) => typeof v === 'string' && !Number.isNaN(Date.parse(v))),
      ).toBe(true);
    }
    expect(recreatedAfter).toEqual([5, 10, 20, 40, 80]);
    await cluster.advance(5_000);
    expect(cluster.ephemeralRunner(NS, name)).toBeUndefined();
    expect(onlyRunner(cluster).metadata.name).not.toBe(name);
  });

  it('re-creates a NotFound pod without checking for a job (#4588), reusing the spent registration', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    cluster.addNode({ name: 'node-b' });
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const t0 = cluster.clock.now();
    cluster.faults.deleteNode(pod.spec.nodeName as string);
    await cluster.advance(cluster.timings.podGcDelayMs + 1_000);
    await cluster.runUntil(() => cluster.pod(NS, name)?.status?.phase === 'Running');
    const again = cluster.pod(NS, name);
    expect(again?.metadata.uid).not.toBe(pod.metadata.uid);
    expect(again?.spec.nodeName).toBe('node-b');
    expect(onlyRunner(cluster).status?.jobId).toBeDefined();
    expect(
      cluster.logs.some(
        (l) =>
          l.message === 'Ephemeral runner pod does not exist. Creating new ephemeral runner' &&
          l.at > t0,
      ),
    ).toBe(true);
    // The re-created runner never gets another job: its registration is spent.
    await cluster.advance(60_000);
    expect(cluster.actions.runners.get(name)?.used).toBe(true);
  });

  it('keeps an ER Failed with reason InvalidPod when pod creation is denied, holding its slot', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13', maxRunners: 1 });
    cluster.faults.denyPodCreation(() => true);
    cluster.actions.queueJob(SET);
    await cluster.advance(30_000);
    const er = onlyRunner(cluster);
    expect(er.status).toMatchObject({
      phase: 'Failed',
      reason: 'InvalidPod',
      message:
        'admission webhook "policy.example.com" denied the request: runner pods must not run privileged',
    });
    cluster.faults.denyPodCreation(undefined);
    await cluster.advance(30 * 60_000);
    expect(onlyRunner(cluster).metadata.name).toBe(er.metadata.name);
    expect(ersStatus(cluster)).toMatchObject({ currentReplicas: 1, failedEphemeralRunners: 1 });
  });

  it('holds an ER deletion on the registration finalizer while GitHub thinks the job is running', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod, jobId } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    cluster.faults.powerOffNode(pod.spec.nodeName as string);
    await cluster.advance(1_000);
    cluster.api.delete('runner-medic', 'ephemeralrunners', NS, name);
    await cluster.advance(5 * 60_000);
    const held = cluster.ephemeralRunner(NS, name);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    expect(held?.metadata.finalizers).toContain(
      'ephemeralrunner.actions.github.com/runner-registration-finalizer',
    );
    expect(
      cluster.logs.filter(
        (l) => l.message === 'Runner is still running the job. Re-queue in 30 seconds',
      ).length,
    ).toBeGreaterThanOrEqual(9);
    // A replacement does not wait: deleting ERs are not in scaleTotal.
    expect(cluster.ephemeralRunners(NS).filter((e) => !e.metadata.deletionTimestamp)).toHaveLength(
      1,
    );
    await cluster.runUntil(() => cluster.actions.job(jobId)?.status === 'completed', {
      maxMs: 11 * 60_000,
    });
    await cluster.advance(31_000);
    // The pod on the dead node stays until PodGC; the ER waits for its pod.
    expect(cluster.ephemeralRunner(NS, name)?.metadata.finalizers).toEqual([
      'ephemeralrunner.actions.github.com/finalizer',
    ]);
  });
});

describe('remediation through the API, as runner-medic would do it', () => {
  it('deleting an InvalidPod ER over HTTP frees the slot; the audit log shows what runner-medic touched', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13', maxRunners: 1 });
    await cluster.start();
    try {
      cluster.faults.denyPodCreation(() => true);
      const job = cluster.actions.queueJob(SET);
      await cluster.advance(30_000);
      const stuck = onlyRunner(cluster);
      expect(stuck.status?.reason).toBe('InvalidPod');
      cluster.faults.denyPodCreation(undefined);

      const kc = new KubeConfig();
      kc.loadFromString(cluster.kubeconfig('runner-medic'));
      const custom = kc.makeApiClient(CustomObjectsApi);
      const failed = (await custom.listNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        labelSelector: `actions.github.com/scale-set-name=${SET}`,
      })) as {
        items: {
          metadata: { name: string; uid: string };
          status?: { phase?: string; reason?: string };
        }[];
      };
      const target = failed.items.find(
        (i) => i.status?.phase === 'Failed' && i.status.reason === 'InvalidPod',
      );
      await custom.deleteNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: target?.metadata.name as string,
        body: { preconditions: { uid: target?.metadata.uid } },
      });

      await cluster.runUntil(() => cluster.actions.job(job.jobId)?.status === 'in_progress');
      const mutations = cluster.audit.by('runner-medic');
      expect(mutations).toEqual([
        expect.objectContaining({
          verb: 'delete',
          resource: 'ephemeralrunners.actions.github.com',
          namespace: NS,
          name: stuck.metadata.name,
          code: 200,
          labels: expect.objectContaining({
            'app.kubernetes.io/component': 'runner',
            'actions.github.com/scale-set-name': SET,
          }),
          ownerReferences: [expect.objectContaining({ kind: 'EphemeralRunnerSet' })],
        }),
      ]);
      expect(
        cluster.audit.requests.filter((r) => r.by === 'runner-medic').map((r) => r.verb),
      ).toEqual(['list', 'delete']);
    } finally {
      await cluster.stop();
    }
  });
});
