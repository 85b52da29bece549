/** Records core/v1 Events the way client-go's recorder does (name `<object>.<hex>`). */
import type { Clock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import type { KubeApi } from '../api/kube-api.js';
import { hexId } from '../ids.js';
import { isoTime, type CoreEvent, type KubeObject } from '../types.js';

export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Event source component: `kubelet`, `karpenter`, `default-scheduler`, ... */
  component: string;
  host?: string;
  annotations?: Record<string, string>;
  /** `spec.containers{runner}` for container events. */
  fieldPath?: string;
}

export class EventRecorder {
  constructor(
    private readonly api: KubeApi,
    private readonly clock: Clock,
    private readonly rng: Rng,
  ) {}

  record(involved: KubeObject, spec: EventSpec, actor = spec.component): CoreEvent {
    const now = isoTime(this.clock.now());
    const ns = involved.metadata.namespace ?? 'default';
    const name = `${involved.metadata.name}.${hexId(this.rng, 16)}`;
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name,
        namespace: ns,
        ...(spec.annotations ? { annotations: spec.annotations } : {}),
      },
      involvedObject: {
        kind: involved.kind,
        namespace: involved.metadata.namespace,
        name: involved.metadata.name as string,
        uid: involved.metadata.uid,
        apiVersion: involved.apiVersion,
        resourceVersion: involved.metadata.resourceVersion,
        ...(spec.fieldPath ? { fieldPath: spec.fieldPath } : {}),
      },
      reason: spec.reason,
      message: spec.message,
      source: { component: spec.component, ...(spec.host ? { host: spec.host } : {}) },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type: spec.type,
      eventTime: null,
      reportingComponent: spec.component,
      reportingInstance: spec.host ?? '',
    };
    if (!this.api.tryGet('namespaces', undefined, ns))
      this.api.create(actor, 'namespaces', undefined, { metadata: { name: ns } });
    return this.api.create(actor, 'events', ns, body) as CoreEvent;
  }
}
