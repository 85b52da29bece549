/**
 * An exporter event from a cluster runner-medic is not configured for: what a second
 * kubernetes-event-exporter, pointed at the same bus by mistake (or a cluster removed from
 * `CLUSTERS` while its exporter still runs), puts there. Same shape as sim/kube's exporter.
 */
import { enhancedEvent } from '../../sim/kube/export/event-exporter.js';
import { isoTime, type CoreEvent } from '../../sim/kube/types.js';
import type { BusEntry } from './cluster-twin.js';
import type { ScenarioFault } from './scenario-schema.js';

type UnconfiguredClusterEvent = Extract<ScenarioFault, { kind: 'unconfigured-cluster-event' }>;

/** The labels ARC puts on a runner pod of scale set `arc-linux` (resource-builder.ts). */
const RUNNER_POD_LABELS = {
  'actions-ephemeral-runner': 'True',
  'actions.github.com/scale-set-name': 'arc-linux',
  'app.kubernetes.io/component': 'runner',
};

export function unconfiguredClusterEntry(fault: UnconfiguredClusterEvent, now: number): BusEntry {
  const time = isoTime(now);
  const uid = `00000000-0000-4000-8000-${String(now % 1e12).padStart(12, '0')}`;
  const event: CoreEvent = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${fault.pod}.${now.toString(16)}`,
      namespace: fault.namespace,
      uid,
      resourceVersion: '1',
      creationTimestamp: time,
    },
    involvedObject: {
      kind: 'Pod',
      namespace: fault.namespace,
      name: fault.pod,
      uid: `${uid.slice(0, -4)}0001`,
      apiVersion: 'v1',
    },
    reason: fault.reason,
    message: fault.message,
    source: { component: 'kubelet' },
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
    type: 'Warning',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: '',
  };
  const found = { metadata: { labels: fault.labels ?? RUNNER_POD_LABELS } };
  return {
    source: 'k8s.events',
    'detail-type': 'k8s-event',
    detail: enhancedEvent(event, fault.clusterName, found),
  };
}
