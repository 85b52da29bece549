import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { SimCluster } from '../../../sim/kube/index.js';
import type { EphemeralRunnerSet } from '../../../sim/kube/types.js';
import { arcCluster, busyRunner, NS, onlyRunner, SET } from './helpers.js';

describe('ARC scale-set mode (common to both versions)', () => {
  it.each(['0.9', '0.13'] as const)(
    'ARC %s: a queued job gets a runner named <set>-<5>-runner-<5>, pod = ER = runner name, owned up the chain',
    async (arcVersion) => {
      const cluster = await arcCluster({ arcVersion });
      const { pod } = await busyRunner(cluster);
      const er = onlyRunner(cluster);
      const name = er.metadata.name as string;
      expect(name).toMatch(/^arc-runner-set-[a-z0-9]{5}-runner-[a-z0-9]{5}$/);
      expect(pod.metadata.name).toBe(name);
      expect(er.status?.runnerName).toBe(name);
      expect(cluster.actions.runners.get(name)?.id).toBe(er.status?.runnerId);

      expect(pod.metadata.labels).toMatchObject({
        'actions-ephemeral-runner': 'True',
        'app.kubernetes.io/component': 'runner',
        'app.kubernetes.io/part-of': 'gha-runner-scale-set',
        'actions.github.com/scale-set-name': SET,
        'actions.github.com/scale-set-namespace': NS,
        'actions.github.com/organization': 'acme',
      });
      expect(pod.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'EphemeralRunner',
          name,
          controller: true,
          blockOwnerDeletion: true,
          uid: er.metadata.uid,
        }),
      ]);
      expect(er.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'EphemeralRunnerSet',
        controller: true,
      });
      const ers = cluster.api.all<EphemeralRunnerSet>(
        'ephemeralrunnersets',
        NS,
      )[0] as EphemeralRunnerSet;
      expect(ers.metadata.name).toMatch(/^arc-runner-set-[a-z0-9]{5}$/);
      expect(ers.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'AutoscalingRunnerSet',
        name: SET,
      });
      expect(er.metadata.finalizers).toEqual(
        expect.arrayContaining([
          'ephemeralrunner.actions.github.com/finalizer',
          'ephemeralrunner.actions.github.com/runner-registration-finalizer',
        ]),
      );
      expect(cluster.modelErrors).toEqual([]);
    },
  );

  it('writes the job fields on JobStarted: jobId only from 0.13 on', async () => {
    for (const arcVersion of ['0.9', '0.13'] as const) {
      const cluster = await arcCluster({ arcVersion });
      const { jobId } = await busyRunner(cluster);
      const job = cluster.actions.job(jobId);
      const status = onlyRunner(cluster).status;
      expect(status).toMatchObject({
        phase: 'Running',
        ready: true,
        jobRequestId: job?.runnerRequestId,
        jobRepositoryName: 'acme/app',
        workflowRunId: job?.runId,
        jobWorkflowRef: job?.workflowRef,
        jobDisplayName: job?.displayName,
      });
      if (arcVersion === '0.13') expect(status?.jobId).toBe(job?.jobGuid);
      else expect(status?.jobId).toBeUndefined();
    }
  });

  it('sets replicas = min(minRunners + assigned jobs, maxRunners); idle extras go only on a patchID 0 (empty batch at minRunners)', async () => {
    const cluster = await arcCluster({ minRunners: 2, maxRunners: 5 });
    const ers = () =>
      cluster.api.all<EphemeralRunnerSet>('ephemeralrunnersets', NS)[0] as EphemeralRunnerSet;
    const live = () => cluster.ephemeralRunners(NS).filter((e) => !e.metadata.deletionTimestamp);
    await cluster.advance(5_000);
    expect(ers().spec.replicas).toBe(2);
    const jobs = Array.from({ length: 7 }, () => cluster.actions.queueJob(SET));
    await cluster.advance(2_000);
    expect(ers().spec.replicas).toBe(5);
    expect(ers().spec.patchID).toBeGreaterThan(0);
    await cluster.runUntil(
      () => cluster.actions.jobs.filter((j) => j.status === 'in_progress').length === 5,
    );
    for (const j of jobs) cluster.actions.finishJob(j.jobId);
    await cluster.runUntil(() => cluster.actions.jobs.every((j) => j.status === 'completed'), {
      maxMs: 120_000,
    });
    await cluster.runUntil(() => ers().spec.replicas === 2);
    await cluster.advance(cluster.timings.listenerEmptyBatchMs + 5_000);
    expect(ers().spec).toMatchObject({ replicas: 2, patchID: 0 });
    expect(live()).toHaveLength(2);
    expect(cluster.logs.some((l) => l.message === 'Deleting ephemeral runner (scale down)')).toBe(
      true,
    );
    expect(cluster.modelErrors).toEqual([]);
  });

  it('is deterministic: the same seed gives the same names, uids and audit trail', async () => {
    const run = async () => {
      const cluster = await arcCluster({ seed: 'same' });
      await busyRunner(cluster);
      return (
        cluster.audit.entries
          .map((e) => `${e.at}|${e.by}|${e.verb}|${e.resource}|${e.name}|${e.code}`)
          .join('\n') + JSON.stringify(cluster.pods().map((p) => p.metadata.uid))
      );
    };
    expect(await run()).toBe(await run());
  });

  it("serves the models' objects to client-node, and validates them against the real CRDs", async () => {
    const cluster = await new SimCluster({ seed: 9 }).start();
    try {
      cluster.addNode();
      cluster.addScaleSet({ name: SET, namespace: NS, maxRunners: 3 });
      await cluster.advance(2_000);
      cluster.actions.queueJob(SET);
      await cluster.advance(20_000);
      const kc = new KubeConfig();
      kc.loadFromString(cluster.kubeconfig());
      const custom = kc.makeApiClient(CustomObjectsApi);
      const list = (await custom.listNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        labelSelector: `actions.github.com/scale-set-name=${SET}`,
      })) as { items: { metadata: { name: string }; status: { jobId?: string } }[] };
      expect(list.items).toHaveLength(1);
      expect(list.items[0]?.status.jobId).toBeDefined();
      expect(cluster.modelErrors).toEqual([]);
    } finally {
      await cluster.stop();
    }
  });
});
