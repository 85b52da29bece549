/**
 * The object store: one global resourceVersion counter (as etcd's revision), a bounded history
 * of changes for watches to resume from (older resourceVersions answer 410 Gone), and
 * synchronous listeners for the in-process models.
 */
import { deepClone, type KubeObject } from '../types.js';

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  /** Store key of the resource (`pods`, `ephemeralrunners.actions.github.com`). */
  resource: string;
  object: KubeObject;
  /** The object before the change (MODIFIED and DELETED). */
  previous?: KubeObject;
  rv: number;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  /** How many changes a watch can resume across before 410 Gone. */
  historyLimit?: number;
}

const keyOf = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

export class ObjectStore {
  /**
   * A fault for tests: a watch of `resource` (a store key) for which this answers `cut` loses its
   * connection (the socket is destroyed) right after it replays its history, before any bookmark,
   * as an API server restart or a load balancer's idle cut does to a real stream.
   */
  watchFault: ((resource: string) => 'cut' | undefined) | undefined;
  private rv = 1;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  /**
   * Each resource's objects by namespace ('' when cluster-scoped): a namespaced list reads its
   * namespace only, as the API server's watch cache indexes by namespace (storage/cacher).
   */
  private readonly byNamespace = new Map<string, Map<string, Map<string, KubeObject>>>();
  /** Retained changes are `history[historyStart..]`; the array is trimmed now and then. */
  private history: StoreEvent[] = [];
  private historyStart = 0;
  /** The oldest resourceVersion a watch may resume from. */
  private compactedRv = 1;
  private readonly listeners = new Set<StoreListener>();
  private readonly historyLimit: number;

  constructor(options: StoreOptions = {}) {
    this.historyLimit = options.historyLimit ?? 50_000;
  }

  currentRv(): number {
    return this.rv;
  }

  oldestResumableRv(): number {
    return this.compactedRv;
  }

  /** Drops history so that watches from older resourceVersions get 410 Gone. */
  compact(): void {
    this.history = [];
    this.historyStart = 0;
    this.compactedRv = this.rv;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(resource: string, ns: string | undefined, name: string): KubeObject | undefined {
    const obj = this.objects.get(resource)?.get(keyOf(ns, name));
    return obj ? deepClone(obj) : undefined;
  }

  /** Reads without copying: callers must not mutate the result. */
  peek(resource: string, ns: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(resource)?.get(keyOf(ns, name));
  }

  /** Objects sorted by namespace/name (the order the real server lists in); not copied. */
  scan(resource: string, ns?: string): KubeObject[] {
    const map =
      ns === undefined ? this.objects.get(resource) : this.byNamespace.get(resource)?.get(ns);
    if (!map) return [];
    return [...map.keys()].sort().map((k) => map.get(k) as KubeObject);
  }

  resources(): string[] {
    return [...this.objects.keys()];
  }

  /** Inserts or replaces; stamps a new resourceVersion. Returns a copy of what was stored. */
  put(resource: string, object: KubeObject): KubeObject {
    let map = this.objects.get(resource);
    if (!map) {
      map = new Map();
      this.objects.set(resource, map);
    }
    const key = keyOf(object.metadata.namespace, object.metadata.name as string);
    const previous = map.get(key);
    const rv = ++this.rv;
    const stored = deepClone(object);
    stored.metadata.resourceVersion = String(rv);
    map.set(key, stored);
    this.namespaceMap(resource, object.metadata.namespace).set(key, stored);
    this.emit({ type: previous ? 'MODIFIED' : 'ADDED', resource, object: stored, previous, rv });
    return deepClone(stored);
  }

  remove(resource: string, ns: string | undefined, name: string): KubeObject | undefined {
    const map = this.objects.get(resource);
    const key = keyOf(ns, name);
    const previous = map?.get(key);
    if (!map || !previous) return undefined;
    map.delete(key);
    this.namespaceMap(resource, ns).delete(key);
    const rv = ++this.rv;
    const gone = deepClone(previous);
    gone.metadata.resourceVersion = String(rv);
    this.emit({ type: 'DELETED', resource, object: gone, previous, rv });
    return deepClone(gone);
  }

  /** Changes after `rv`, or 'expired' when history no longer reaches back that far. */
  changesSince(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compactedRv) return 'expired';
    let lo = this.historyStart;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.history[mid] as StoreEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.history.slice(lo);
  }

  private namespaceMap(resource: string, ns: string | undefined): Map<string, KubeObject> {
    let byNs = this.byNamespace.get(resource);
    if (!byNs) this.byNamespace.set(resource, (byNs = new Map()));
    let map = byNs.get(ns ?? '');
    if (!map) byNs.set(ns ?? '', (map = new Map()));
    return map;
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    const retained = this.history.length - this.historyStart;
    if (retained > this.historyLimit) {
      this.historyStart += retained - this.historyLimit;
      this.compactedRv = (this.history[this.historyStart - 1] as StoreEvent).rv;
      // Trimmed once the dropped part outgrows what is kept: each change is copied about once.
      if (this.historyStart > this.historyLimit) {
        this.history = this.history.slice(this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const l of [...this.listeners]) l(event);
  }
}
