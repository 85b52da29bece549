/**
 * kubernetes-event-exporter (resmoio, EventBridge sink with the default Detail): each Event
 * added or updated becomes one PutEvents entry whose Detail is the Event plus `clusterName`,
 * with `involvedObject` enriched by a lookup of the object's labels, annotations and owner
 * references (`deleted: true` when it is gone). One attempt per event, no retry: delivery is at
 * most once, and `dropRate` loses entries on purpose.
 */
import type { SimClock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import type { KubeApi } from '../api/kube-api.js';
import { resourceByKind, resourceKey } from '../api/resources.js';
import { uuid } from '../ids.js';
import type { CoreEvent, KubeObject } from '../types.js';
import { busTime, type EventBus, type PutEventsEntry } from './event-bus.js';

export interface EventExporterOptions {
  clusterName: string;
  region: string;
  account: string;
  /** Probability in [0, 1] that an entry is lost (PutEvents failure, no retry). */
  dropRate?: number;
  /** Exporter watch + PutEvents latency (simulated ms). */
  latencyMs?: number;
  source?: string;
  detailType?: string;
  eventBusName?: string;
}

export class EventExporter {
  private readonly unsubscribe: () => void;
  dropRate: number;

  constructor(
    private readonly api: KubeApi,
    private readonly clock: SimClock,
    private readonly rng: Rng,
    private readonly bus: EventBus,
    private readonly options: EventExporterOptions,
  ) {
    this.dropRate = options.dropRate ?? 0;
    this.unsubscribe = api.store.subscribe((ev) => {
      if (ev.resource !== 'events' || ev.type === 'DELETED') return;
      const snapshot = structuredClone(ev.object) as CoreEvent;
      clock.after(options.latencyMs ?? 1_000, `export ${snapshot.metadata.name}`, () =>
        this.export(snapshot),
      );
    });
  }

  stop(): void {
    this.unsubscribe();
  }

  /** The exporter's `EnhancedEvent.ToJSON()`. */
  enhance(event: CoreEvent): Record<string, unknown> {
    const io = event.involvedObject;
    const def = io.apiVersion ? resourceByKind(io.apiVersion, io.kind) : undefined;
    const target = def
      ? this.api.store.peek(resourceKey(def), def.namespaced ? io.namespace : undefined, io.name)
      : undefined;
    const found = target && (!io.uid || target.metadata.uid === io.uid) ? target : undefined;
    return enhancedEvent(event, this.options.clusterName, found);
  }

  private export(event: CoreEvent): void {
    const now = this.clock.now();
    const detail = this.enhance(event);
    const entry: PutEventsEntry = {
      Source: this.options.source ?? 'k8s.events',
      DetailType: this.options.detailType ?? 'k8s-event',
      Detail: JSON.stringify(detail),
      EventBusName: this.options.eventBusName ?? 'default',
      Time: new Date(now),
    };
    if (this.rng.chance(this.dropRate)) {
      this.bus.drop({
        at: now,
        entry,
        reason: 'PutEvents failed; kubernetes-event-exporter does not retry',
      });
      return;
    }
    this.bus.publish({
      via: 'kubernetes-event-exporter',
      at: now,
      entry,
      event: {
        version: '0',
        id: uuid(this.rng),
        'detail-type': entry.DetailType,
        source: entry.Source,
        account: this.options.account,
        time: busTime(now),
        region: this.options.region,
        resources: [],
        detail,
      },
    });
  }
}

/**
 * The exporter's `EnhancedEvent.ToJSON()`: the Event plus `clusterName`, its involved object
 * enriched from `found` (the object the exporter's lookup found; `deleted: true` without it).
 */
export function enhancedEvent(
  event: CoreEvent,
  clusterName: string,
  found: { metadata: KubeObject['metadata'] } | undefined,
): Record<string, unknown> {
  const io = event.involvedObject;
  const m = event.metadata;
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
      ...(m.annotations ? { annotations: m.annotations } : {}),
    },
    reason: event.reason,
    message: event.message,
    source: event.source,
    firstTimestamp: event.firstTimestamp,
    lastTimestamp: event.lastTimestamp,
    count: event.count,
    type: event.type,
    eventTime: event.eventTime,
    reportingComponent: event.reportingComponent,
    reportingInstance: event.reportingInstance,
    clusterName,
    involvedObject: {
      kind: io.kind,
      ...(io.namespace ? { namespace: io.namespace } : {}),
      name: io.name,
      ...(io.uid ? { uid: io.uid } : {}),
      ...(io.apiVersion ? { apiVersion: io.apiVersion } : {}),
      ...(io.resourceVersion ? { resourceVersion: io.resourceVersion } : {}),
      ...(io.fieldPath ? { fieldPath: io.fieldPath } : {}),
      ...(found?.metadata.labels ? { labels: { ...found.metadata.labels } } : {}),
      ...(found?.metadata.annotations ? { annotations: { ...found.metadata.annotations } } : {}),
      ...(found?.metadata.ownerReferences
        ? { ownerReferences: structuredClone(found.metadata.ownerReferences) }
        : {}),
      deleted: !found,
    },
  };
}
