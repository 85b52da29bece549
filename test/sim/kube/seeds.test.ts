/**
 * The two user reports that started the project (shared/seeds/), replayed in the twin with the
 * messages and `kubectl` output they quote.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { SHUTDOWN_SIGNAL_MESSAGE, SimCluster } from '../../../sim/kube/index.js';
import type { CoreEvent } from '../../../sim/kube/types.js';

describe('seed 000: "evicted ephemeral runner pod treated as viable and hangs workflows"', () => {
  it('replays the DiskPressure rejection on ARC 0.9: the job waits until someone deletes the pod', async () => {
    const cluster = await new SimCluster({ arcVersion: '0.9', seed: 'seed-000' }).start();
    try {
      cluster.addNode({ name: 'pool-github-runners-3-ogny9' });
      cluster.addScaleSet({
        name: 'arc-runner-set',
        namespace: 'arc-runners',
        githubConfigUrl: 'https://github.com/acme',
      });
      await cluster.advance(2_000);
      const job = cluster.actions.queueJob('arc-runner-set');
      await cluster.runUntil(() => cluster.pods('arc-runners').some((p) => p.spec.nodeName));
      const name = cluster.pods('arc-runners')[0]?.metadata.name as string;
      expect(name).toMatch(/^arc-runner-set-[a-z0-9]{5}-runner-[a-z0-9]{5}$/);
      cluster.faults.admissionReject('arc-runners', name, 'DiskPressure');
      await cluster.advance(18 * 60_000);

      // What `kubectl describe pod` showed.
      const kc = new KubeConfig();
      kc.loadFromString(cluster.kubeconfig('user'));
      const core = kc.makeApiClient(CoreV1Api);
      const pod = await core.readNamespacedPod({ namespace: 'arc-runners', name });
      expect(pod.status).toMatchObject({
        phase: 'Failed',
        reason: 'Evicted',
        message: 'Pod was rejected: The node had condition: [DiskPressure]. ',
      });
      expect(pod.metadata?.labels).toMatchObject({
        'actions-ephemeral-runner': 'True',
        'actions.github.com/organization': 'acme',
        'actions.github.com/scale-set-name': 'arc-runner-set',
        'actions.github.com/scale-set-namespace': 'arc-runners',
        'app.kubernetes.io/component': 'runner',
        'app.kubernetes.io/part-of': 'gha-runner-scale-set',
        'pod-template-hash': expect.any(String),
      });
      expect(pod.metadata?.annotations?.['actions.github.com/runner-group-name']).toBe('Default');
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'EphemeralRunner',
        name,
        controller: true,
      });
      expect(pod.spec?.tolerations).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            key: 'node.kubernetes.io/not-ready',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 300,
          }),
          expect.objectContaining({
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 300,
          }),
        ]),
      );
      expect(pod.status?.qosClass).toBe('BestEffort');
      const events = (
        await core.listNamespacedEvent({
          namespace: 'arc-runners',
          fieldSelector: `involvedObject.name=${name}`,
        })
      ).items.map((e) => [e.type, e.reason, e.source?.component, e.message]);
      expect(events).toEqual([
        [
          'Normal',
          'Scheduled',
          'default-scheduler',
          `Successfully assigned arc-runners/${name} to pool-github-runners-3-ogny9`,
        ],
        ['Warning', 'Evicted', 'kubelet', 'The node had condition: [DiskPressure]. '],
      ]);
      // "Waiting for a runner to pick up this job..." — and the ERS counts the dead runner.
      expect(cluster.actions.job(job.jobId)?.status).toBe('queued');
      expect(
        cluster.logs.filter((l) => l.message === 'Scaling comparison').at(-1)?.fields,
      ).toMatchObject({ current: 1, desired: 1 });

      // Workaround from the report: `kubectl delete pod`; the same name comes back Running.
      await core.deleteNamespacedPod({ namespace: 'arc-runners', name });
      await cluster.runUntil(() => cluster.actions.job(job.jobId)?.status === 'in_progress', {
        maxMs: 60_000,
      });
      expect(cluster.pod('arc-runners', name)?.status?.phase).toBe('Running');
      expect(cluster.audit.by('user').map((e) => `${e.verb} ${e.resource}/${e.name}`)).toEqual([
        `delete pods/${name}`,
      ]);
    } finally {
      await cluster.stop();
    }
  });
});

describe('seed 004: "SIGTERM graceful shutdown" (Karpenter moving runner pods)', () => {
  it('a busy runner on a consolidated node fails its job with the shutdown signal', async () => {
    const cluster = new SimCluster({
      arcVersion: '0.13',
      seed: 'seed-004',
      karpenter: { provisioning: true },
    });
    cluster.addNode({ name: 'ip-10-0-1-10.eu-west-1.compute.internal' });
    cluster.addScaleSet({ name: 'arc-runner-set', namespace: 'arc-runners' });
    await cluster.advance(2_000);
    const job = cluster.actions.queueJob('arc-runner-set', { durationMs: 30 * 60_000 });
    await cluster.runUntil(() => cluster.actions.job(job.jobId)?.status === 'in_progress');
    const node = cluster.pods('arc-runners')[0]?.spec.nodeName as string;
    expect(cluster.faults.karpenterDisrupt(node, 'drift')).toBe('started');
    await cluster.advance(10_000);
    expect(cluster.actions.job(job.jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      failureMessage: SHUTDOWN_SIGNAL_MESSAGE,
    });
    const nodeEvents = cluster.api
      .all<CoreEvent>('events')
      .filter((e) => e.involvedObject.kind === 'Node')
      .map((e) => `${e.reason}: ${e.message}`);
    expect(nodeEvents).toContain('DisruptionTerminating: Disrupting Node: Drifted');
    // Karpenter provisions a replacement node for the re-created runner pod.
    await cluster.runUntil(
      () => cluster.nodes().length === 1 && cluster.nodes()[0]?.metadata.name !== node,
      { maxMs: 5 * 60_000 },
    );
    expect(cluster.modelErrors).toEqual([]);
  });
});
