/**
 * The exporter as kubernetes-event-exporter v1.7 behaves (pkg/kube/watcher.go, objects.go,
 * pkg/exporter/route.go) with the config runner-medic ships (infra/kubernetes/event-exporter.yaml):
 * ADDED events only, none older than maxEventAgeSeconds, only what the shipped route matches.
 */
import { shippedExporterRouting } from '../../../sim/kube/export/shipped-exporter-config.js';
import type { SimCluster } from '../../../sim/kube/index.js';
import type { CoreEvent } from '../../../sim/kube/types.js';
import { isoTime } from '../../../sim/kube/types.js';
import { arcCluster, busyRunner, NS } from './helpers.js';

interface Detail {
  reason: string;
  clusterName: string;
  involvedObject: {
    kind: string;
    name: string;
    uid?: string;
    labels?: Record<string, string>;
    deleted: boolean;
  };
}

const details = (cluster: SimCluster) =>
  cluster.bus.deliveries
    .filter((d) => d.via === 'kubernetes-event-exporter')
    .map((d) => d.event.detail as Detail);

function shippedCluster(): Promise<SimCluster> {
  return arcCluster({
    name: 'prod-eu',
    arcVersion: '0.13',
    eventExport: {
      routing: shippedExporterRouting({ clusterName: 'prod-eu', runnerNamespaces: [NS] }),
    },
  });
}

function podEvent(cluster: SimCluster, pod: string, reason: string, lastTimestamp: string) {
  const live = cluster.pod(NS, pod);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod}.${reason.toLowerCase()}`, namespace: NS },
    involvedObject: {
      kind: 'Pod',
      namespace: NS,
      name: pod,
      uid: live?.metadata.uid,
      apiVersion: 'v1',
      resourceVersion: live?.metadata.resourceVersion,
    },
    reason,
    message: 'test',
    source: { component: 'kubelet' },
    firstTimestamp: lastTimestamp,
    lastTimestamp,
    count: 1,
    type: 'Warning',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: '',
  };
}

describe('kubernetes-event-exporter fidelity, with the shipped config', () => {
  it('reads the shipped config: the route, maxEventAgeSeconds 60, the runner-medic EventBridge receiver', () => {
    const routing = shippedExporterRouting({ clusterName: 'c1', runnerNamespaces: ['a', 'b'] });
    expect(routing.maxEventAgeSeconds).toBe(60);
    expect(routing.clusterName).toBe('c1');
    expect(routing.receivers['runner-medic']).toMatchObject({
      source: 'k8s.events',
      detailType: 'k8s-event',
    });
    expect(routing.route.routes[0]?.match[0]?.namespace).toBe('^(a|b)$');
  });

  it('exports an added event once and ignores its updates (OnUpdate is a no-op)', async () => {
    const cluster = await shippedCluster();
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const now = isoTime(cluster.clock.now());
    cluster.api.create('kubelet', 'events', NS, podEvent(cluster, name, 'Evicted', now));
    await cluster.advance(2_000);
    const first = details(cluster).filter((d) => d.reason === 'Evicted');
    expect(first).toHaveLength(1);

    cluster.api.modify<CoreEvent>('kubelet', 'events', NS, `${name}.evicted`, (e) => {
      e.count = 2;
      e.lastTimestamp = isoTime(cluster.clock.now());
    });
    await cluster.advance(2_000);
    expect(details(cluster).filter((d) => d.reason === 'Evicted')).toHaveLength(1);
  });

  it('discards an event older than maxEventAgeSeconds when it is handled', async () => {
    const cluster = await shippedCluster();
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const old = isoTime(cluster.clock.now() - 61_000);
    cluster.api.create('kubelet', 'events', NS, podEvent(cluster, name, 'Preempting', old));
    const fresh = isoTime(cluster.clock.now() - 30_000);
    cluster.api.create('kubelet', 'events', NS, {
      ...podEvent(cluster, name, 'Preempted', fresh),
    });
    await cluster.advance(2_000);
    const reasons = details(cluster).map((d) => d.reason);
    expect(reasons).toContain('Preempted');
    expect(reasons).not.toContain('Preempting');
    expect(cluster.exporter.unexported).toContainEqual(
      expect.objectContaining({ reason: 'Preempting', why: 'too-old' }),
    );
  });

  it('sends only what the shipped route matches: runner pods in runner namespaces, listed reasons', async () => {
    const cluster = await shippedCluster();
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const now = isoTime(cluster.clock.now());
    // A reason the route does not list, and one it lists but unanchored would let through.
    cluster.api.create('kubelet', 'events', NS, podEvent(cluster, name, 'BackOff', now));
    cluster.api.create('kubelet', 'events', NS, podEvent(cluster, name, 'NotEvicted', now));
    cluster.api.create('kubelet', 'events', NS, podEvent(cluster, name, 'OutOfmemory', now));
    await cluster.advance(2_000);
    const reasons = details(cluster).map((d) => d.reason);
    expect(reasons).toContain('OutOfmemory');
    expect(reasons).not.toContain('BackOff');
    expect(reasons).not.toContain('NotEvicted');
    // The scheduler's and kubelet's routine events about runner pods never reach the bus.
    expect(reasons).not.toContain('Scheduled');
    expect(reasons).not.toContain('Started');
    expect(cluster.exporter.unexported.map((u) => u.reason)).toEqual(
      expect.arrayContaining(['BackOff', 'NotEvicted', 'Scheduled']),
    );
  });

  it('looks the object up when it exports: a pod already gone has no labels, so the route drops its event', async () => {
    const cluster = await shippedCluster();
    const name = 'lone-runner';
    cluster.api.create('scenario', 'pods', NS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { 'actions-ephemeral-runner': 'True' } },
      spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    });
    cluster.api.create(
      'kubelet',
      'events',
      NS,
      podEvent(cluster, name, 'Evicted', isoTime(cluster.clock.now())),
    );
    cluster.api.delete('scenario', 'pods', NS, name, { gracePeriodSeconds: 0 });
    expect(cluster.pod(NS, name)).toBeUndefined();
    await cluster.advance(2_000);
    expect(details(cluster).filter((d) => d.reason === 'Evicted')).toEqual([]);
    expect(cluster.exporter.unexported).toContainEqual(
      expect.objectContaining({ reason: 'Evicted', why: 'no-route' }),
    );
  });

  it('looks the object up by name, not uid: a runner pod ARC re-created under the same name lends its labels', async () => {
    const cluster = await shippedCluster();
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const oldUid = pod.metadata.uid;
    cluster.api.create(
      'kubelet',
      'events',
      NS,
      podEvent(cluster, name, 'Evicted', isoTime(cluster.clock.now())),
    );
    cluster.api.delete('scenario', 'pods', NS, name, { gracePeriodSeconds: 0 });
    await cluster.advance(2_000);
    expect(cluster.pod(NS, name)?.metadata.uid).not.toBe(oldUid);
    const evicted = details(cluster).filter((d) => d.reason === 'Evicted');
    expect(evicted).toHaveLength(1);
    expect(evicted[0]?.involvedObject).toMatchObject({
      uid: oldUid,
      labels: { 'actions-ephemeral-runner': 'True' },
      deleted: false,
    });
  });
});

describe('kubernetes-event-exporter without a configured route (sim/kube tests)', () => {
  it('still exports ADDED events only', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    cluster.api.create(
      'kubelet',
      'events',
      NS,
      podEvent(cluster, name, 'BackOff', isoTime(cluster.clock.now())),
    );
    await cluster.advance(2_000);
    cluster.api.modify<CoreEvent>('kubelet', 'events', NS, `${name}.backoff`, (e) => {
      e.count = 5;
    });
    await cluster.advance(2_000);
    expect(details(cluster).filter((d) => d.reason === 'BackOff')).toHaveLength(1);
  });
});
