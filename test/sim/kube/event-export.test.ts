import type { SimCluster } from '../../../sim/kube/index.js';
import type { BusDelivery } from '../../../sim/kube/index.js';
import { arcCluster, busyRunner, NS, SET } from './helpers.js';

interface Detail {
  reason: string;
  message: string;
  type: string;
  clusterName: string;
  source: { component?: string; host?: string };
  metadata: { name: string; namespace: string; uid: string };
  involvedObject: {
    kind: string;
    name: string;
    namespace?: string;
    uid?: string;
    apiVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string }[];
    deleted: boolean;
  };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  eventTime: null;
  reportingComponent: string;
  reportingInstance: string;
}

const exported = (cluster: SimCluster) =>
  cluster.bus.deliveries.filter((d) => d.via === 'kubernetes-event-exporter');

describe('kubernetes-event-exporter EventBridge export', () => {
  it('puts one entry per Event, Detail = Event + clusterName with involvedObject enriched from the live object', async () => {
    const cluster = await arcCluster({
      name: 'prod-eu',
      arcVersion: '0.13',
      podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
    });
    const seen: BusDelivery[] = [];
    cluster.bus.subscribe((d) => seen.push(d));
    const { pod } = await busyRunner(cluster);
    cluster.faults.evictForNodePressure(NS, pod.metadata.name as string, 'memory');
    await cluster.advance(2_000);

    const delivery = exported(cluster).find(
      (d) => (d.event.detail as Detail).reason === 'Evicted',
    ) as BusDelivery;
    expect(seen).toContain(delivery);
    expect(delivery.entry).toMatchObject({
      Source: 'k8s.events',
      DetailType: 'k8s-event',
      EventBusName: 'default',
    });
    expect(JSON.parse(delivery.entry?.Detail as string)).toEqual(delivery.event.detail);
    expect(delivery.event).toMatchObject({
      version: '0',
      source: 'k8s.events',
      'detail-type': 'k8s-event',
      account: '123456789012',
      region: 'eu-west-1',
      resources: [],
    });
    const detail = delivery.event.detail as Detail;
    expect(detail).toMatchObject({
      reason: 'Evicted',
      type: 'Warning',
      clusterName: 'prod-eu',
      source: { component: 'kubelet', host: 'node-a' },
      count: 1,
      eventTime: null,
      reportingComponent: 'kubelet',
      message: expect.stringMatching(/^The node was low on resource: memory\./),
    });
    expect(detail.metadata.namespace).toBe(NS);
    expect(detail.involvedObject).toMatchObject({
      kind: 'Pod',
      namespace: NS,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
      apiVersion: 'v1',
      deleted: false,
      labels: expect.objectContaining({
        'actions-ephemeral-runner': 'True',
        'actions.github.com/scale-set-name': SET,
      }),
      annotations: expect.objectContaining({ 'karpenter.sh/do-not-disrupt': 'true' }),
      ownerReferences: [
        expect.objectContaining({
          apiVersion: 'actions.github.com/v1alpha1',
          kind: 'EphemeralRunner',
          name: pod.metadata.name,
        }),
      ],
    });
  });

  it('marks involvedObject deleted when the object is gone by export time', async () => {
    // A slow exporter (60 s behind) with an age limit that still lets the event through. The
    // pod is not ARC's, so nothing re-creates it under its name (the lookup is by name:
    // exporter-fidelity.test.ts shows a re-created runner pod lending its labels).
    const cluster = await arcCluster({
      eventExport: { latencyMs: 60_000, maxEventAgeSeconds: 120 },
    });
    cluster.api.create('scenario', 'pods', NS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: NS, labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] },
    });
    await cluster.advance(5_000);
    const pod = cluster.pod(NS, 'web-1');
    cluster.api.delete('scenario', 'pods', NS, 'web-1', { gracePeriodSeconds: 0 });
    await cluster.advance(61_000);
    const scheduled = exported(cluster).find(
      (d) =>
        (d.event.detail as Detail).reason === 'Scheduled' &&
        (d.event.detail as Detail).involvedObject.uid === pod?.metadata.uid,
    );
    expect((scheduled?.event.detail as Detail).involvedObject).toMatchObject({
      deleted: true,
      name: 'web-1',
    });
    expect((scheduled?.event.detail as Detail).involvedObject.labels).toBeUndefined();
  });

  it('delivers at most once: a drop rate loses entries, deterministically for a seed', async () => {
    const run = async (dropRate: number) => {
      const cluster = await arcCluster({ seed: 5, eventExport: { dropRate } });
      for (let i = 0; i < 4; i++) cluster.actions.queueJob(SET, { durationMs: 30_000 });
      await cluster.advance(120_000);
      return {
        delivered: exported(cluster).length,
        dropped: cluster.bus.dropped.length,
        events: cluster.api.all('events').length,
      };
    };
    const none = await run(0);
    expect(none.dropped).toBe(0);
    expect(none.delivered).toBeGreaterThanOrEqual(none.events);
    const half = await run(0.5);
    expect(half.dropped).toBeGreaterThan(0);
    expect(half.delivered).toBeGreaterThan(0);
    expect(half.delivered + half.dropped).toBe(none.delivered);
    expect(await run(0.5)).toEqual(half);
    const all = await run(1);
    expect(all.delivered).toBe(0);
  });
});
