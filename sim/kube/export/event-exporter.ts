/**
 * kubernetes-event-exporter v1.7 (resmoio) with its EventBridge sink, as it treats each Event:
 * - only ADDED events are exported: `OnUpdate` and `OnDelete` are no-ops (pkg/kube/watcher.go),
 *   so a recurring event whose `count` is bumped in place is exported once, the first time;
 * - an event whose `lastTimestamp` (or `eventTime` when unset) is more than `maxEventAgeSeconds`
 *   old when the exporter handles it is discarded (watcher.go `isEventDiscarded`; the config's
 *   default is 5 s, the shipped config sets 60);
 * - the involved object is looked up by kind, namespace and NAME (no uid check), through a cache
 *   keyed by the reference's `uid/resourceVersion` (pkg/kube/objects.go): labels, annotations
 *   and owner references are added, `deleted: true` when it is gone (no labels then) or has a
 *   deletionTimestamp;
 * - the config's `route` decides the receivers (exporter-route.ts, route.go); each send to an
 *   EventBridge receiver is one PutEvents entry, Detail = the enhanced event plus `clusterName`.
 * One attempt per entry, no retry: delivery is at most once, and `dropRate` loses entries.
 * Without `routing` (sim/kube's own tests), every event goes to one EventBridge receiver.
 */
import type { SimClock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import type { KubeApi } from '../api/kube-api.js';
import { resourceByKind, resourceKey } from '../api/resources.js';
import { uuid } from '../ids.js';
import type { CoreEvent, KubeObject } from '../types.js';
import { busTime, type EventBus, type PutEventsEntry } from './event-bus.js';
import { routeEvent, type ExporterRoute } from './exporter-route.js';

/** What the exporter's config.yaml says, as far as the twin applies it. */
export interface ExporterRouting {
  route: ExporterRoute;
  maxEventAgeSeconds: number;
  /** `cacheSize`: object lookups kept (default 1024). */
  cacheSize: number;
  /** EventBridge receivers by name (other receiver kinds put nothing on the bus). */
  receivers: Record<string, { source: string; detailType: string; eventBusName: string }>;
  clusterName?: string;
}

export interface EventExporterOptions {
  clusterName: string;
  region: string;
  account: string;
  /** Probability in [0, 1] that an entry is lost (PutEvents failure, no retry). */
  dropRate?: number;
  /** Exporter watch + PutEvents latency (simulated ms). */
  latencyMs?: number;
  /** The config's route, age limit and receivers; default: everything to one receiver. */
  routing?: ExporterRouting;
  /** Without `routing`: the config's maxEventAgeSeconds (config.go's default, 5, when unset). */
  maxEventAgeSeconds?: number;
  source?: string;
  detailType?: string;
  eventBusName?: string;
}

/** Why an event the exporter saw put nothing on the bus. */
export interface UnexportedEvent {
  at: number;
  event: string;
  reason: string;
  why: 'too-old' | 'no-route';
}

type LookedUp = { metadata: KubeObject['metadata'] } | 'not-found';

export class EventExporter {
  private readonly unsubscribe: () => void;
  private readonly lookups = new Map<string, LookedUp>();
  dropRate: number;
  /** Events handled but not sent: older than maxEventAgeSeconds, or matched by no route. */
  readonly unexported: UnexportedEvent[] = [];

  constructor(
    private readonly api: KubeApi,
    private readonly clock: SimClock,
    private readonly rng: Rng,
    private readonly bus: EventBus,
    private readonly options: EventExporterOptions,
  ) {
    this.dropRate = options.dropRate ?? 0;
    this.unsubscribe = api.store.subscribe((ev) => {
      // watcher.go: OnUpdate and OnDelete ignore the event; only OnAdd exports.
      if (ev.resource !== 'events' || ev.type !== 'ADDED') return;
      const snapshot = structuredClone(ev.object) as CoreEvent;
      clock.after(options.latencyMs ?? 1_000, `export ${snapshot.metadata.name}`, () =>
        this.export(snapshot),
      );
    });
  }

  stop(): void {
    this.unsubscribe();
  }

  /** The exporter's `EnhancedEvent.ToJSON()`, after its object lookup (objects.go). */
  enhance(event: CoreEvent): Record<string, unknown> {
    const looked = this.lookUp(event);
    return enhancedEvent(
      event,
      this.options.routing?.clusterName ?? this.options.clusterName,
      looked === 'not-found' ? undefined : looked,
    );
  }

  /** objects.go `GetObjectMetadata`: GET by name, cached by the reference's uid/resourceVersion. */
  private lookUp(event: CoreEvent): LookedUp {
    const io = event.involvedObject;
    const key = `${io.uid ?? ''}/${io.resourceVersion ?? ''}`;
    const cached = this.lookups.get(key);
    if (cached !== undefined) {
      this.lookups.delete(key);
      this.lookups.set(key, cached);
      return cached;
    }
    const def = io.apiVersion ? resourceByKind(io.apiVersion, io.kind) : undefined;
    const target = def
      ? this.api.store.peek(resourceKey(def), def.namespaced ? io.namespace : undefined, io.name)
      : undefined;
    // A failed lookup is not cached (objects.go adds to the cache only after a successful GET).
    if (!target) return 'not-found';
    const found: LookedUp = { metadata: structuredClone(target.metadata) };
    this.lookups.set(key, found);
    const limit = this.options.routing?.cacheSize ?? 1024;
    while (this.lookups.size > limit) {
      const oldest = this.lookups.keys().next().value;
      if (oldest === undefined) break;
      this.lookups.delete(oldest);
    }
    return found;
  }

  private export(event: CoreEvent): void {
    const now = this.clock.now();
    const routing = this.options.routing;
    const maxAgeMs = (routing?.maxEventAgeSeconds ?? this.options.maxEventAgeSeconds ?? 5) * 1000;
    const stamp = Date.parse(event.lastTimestamp || event.eventTime || '');
    const unexported = (why: UnexportedEvent['why']) =>
      this.unexported.push({
        at: now,
        event: event.metadata.name ?? '',
        reason: event.reason,
        why,
      });
    if (Number.isFinite(stamp) && now - stamp > maxAgeMs) return void unexported('too-old');
    const detail = this.enhance(event);
    const sends = routing
      ? routeEvent(routing.route, detail).flatMap((name) => {
          const receiver = routing.receivers[name];
          return receiver ? [receiver] : [];
        })
      : [
          {
            source: this.options.source ?? 'k8s.events',
            detailType: this.options.detailType ?? 'k8s-event',
            eventBusName: this.options.eventBusName ?? 'default',
          },
        ];
    if (sends.length === 0) return void unexported('no-route');
    for (const receiver of sends) this.put(now, detail, receiver);
  }

  private put(
    now: number,
    detail: Record<string, unknown>,
    receiver: { source: string; detailType: string; eventBusName: string },
  ): void {
    const entry: PutEventsEntry = {
      Source: receiver.source,
      DetailType: receiver.detailType,
      Detail: JSON.stringify(detail),
      EventBusName: receiver.eventBusName,
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
      deleted: !found || Boolean(found.metadata.deletionTimestamp),
    },
  };
}
