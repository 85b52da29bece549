/*
 * List, then watch: one Kubernetes collection kept as a map of its objects and the
 * resourceVersion that map is true at, brought up to date by resuming a watch from that
 * resourceVersion (kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
 * Used by the sweep (a few seconds a minute, the cursor kept in the store between invocations)
 * and fit for a long-lived informer (call `follow` again whenever it returns).
 *
 * Never a skipped change: every event is applied in order and the resourceVersion advances only
 * with an event or a bookmark (a bookmark promises that every event up to it was sent). When the
 * watch cannot go on from that resourceVersion, the collection is listed again in full:
 * - 410 Gone / Expired, as an ERROR event or a status (the watch cache or etcd compacted past it);
 * - a stream cut, or ended by the server before its bookmark, that cannot be resumed (one
 *   resume is tried from the last resourceVersion seen; a second failure relists);
 * - an ERROR event of any other kind.
 */
import { Watch } from '@kubernetes/client-node/dist/watch.js';
import type { LimitFunction } from 'p-limit';
import type { KubeConfig } from './client-node.js';
import { statusCodeOf } from './kube-errors.js';

/** HTTP status of a failed list (ApiException) or watch (client-node Watch's `statusCode`). */
const codeOf = (e: unknown): number | undefined =>
  statusCodeOf(e) ?? (e as { statusCode?: number } | null)?.statusCode;

/** A followed collection: its objects by `namespace/name`, true at `resourceVersion`. */
export interface FollowedList<T> {
  objects: Map<string, T>;
  /** Null before the first list: the next `follow` lists. */
  resourceVersion: string | null;
}

/** Why a follow listed in full instead of watching. */
type RelistReason = 'no-cursor' | 'expired' | 'cut' | 'error-event';

/** What one `follow` did: watched (these keys changed), or listed everything again. */
export type FollowOutcome =
  | { kind: 'watched'; changed: Set<string>; events: number }
  | { kind: 'listed'; reason: RelistReason };

/** One page of a list: its raw items, the continue token, the list's resourceVersion. */
export interface RawListPage {
  items: unknown[];
  next: string | undefined;
  resourceVersion: string;
}

export interface FollowSource<T> {
  /** One page of the collection (`limit`/`continue`), read from etcd (no resourceVersion). */
  listPage(next: string | undefined): Promise<RawListPage>;
  /** The collection's path, as a list (`/api/v1/namespaces/x/pods`). */
  path: string;
  labelSelector?: string;
  /** The domain object, or null when it does not parse (it is then left out, like a list does). */
  parse(raw: unknown): T | null;
}

export interface FollowOptions {
  kubeConfig: KubeConfig;
  /**
   * The watch's `timeoutSeconds`. The API server sends its bookmark 2 s before that deadline
   * (apiserver cacher, nextBookmarkTime), and the follow ends at the first bookmark, so a watch
   * lasts about `watchSeconds - 2` s when nothing changed. @default 3
   */
  watchSeconds?: number;
  /** Runs each list page in turn with the cluster's other lists (watches are not limited). */
  listSlots?: LimitFunction;
}

const keyOf = (raw: unknown): string | null => {
  const m = (raw as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  if (typeof m?.name !== 'string') return null;
  return `${typeof m.namespace === 'string' ? m.namespace : ''}/${m.name}`;
};

const rvOf = (raw: unknown): string | null => {
  const rv = (raw as { metadata?: { resourceVersion?: unknown } } | null)?.metadata
    ?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : null;
};

type WatchEnd =
  | { kind: 'caught-up' }
  | { kind: 'expired' }
  | { kind: 'error-event'; message: string }
  | { kind: 'cut'; error: unknown };

/** Seconds the client waits beyond `timeoutSeconds` before it takes the stream for stuck. */
const GRACE_SECONDS = 5;

export class ChangeFollower<T> {
  private readonly watchSeconds: number;

  constructor(
    private readonly source: FollowSource<T>,
    private readonly options: FollowOptions,
  ) {
    this.watchSeconds = options.watchSeconds ?? 3;
  }

  /** Lists the collection in full (all pages, one snapshot) into `list`. */
  async relist(list: FollowedList<T>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const objects = new Map<string, T>();
      let next: string | undefined;
      let rv: string | undefined;
      try {
        do {
          const page = await this.listPage(next);
          for (const raw of page.items) this.apply(objects, 'ADDED', raw);
          next = page.next;
          rv = page.resourceVersion;
        } while (next);
        list.objects = objects;
        list.resourceVersion = rv ?? null;
        return;
      } catch (e) {
        // A continue token that outlived compaction: the list starts again, once.
        if (attempt > 0 || next === undefined || codeOf(e) !== 410) throw e;
      }
    }
  }

  private listPage(next: string | undefined): Promise<RawListPage> {
    const slots = this.options.listSlots;
    return slots ? slots(() => this.source.listPage(next)) : this.source.listPage(next);
  }

  /**
   * Brings `list` up to date: a watch from its resourceVersion until the server's bookmark (or
   * its timeout), else a full list. Throws when even the list fails.
   */
  async follow(list: FollowedList<T>): Promise<FollowOutcome> {
    if (list.resourceVersion === null) {
      await this.relist(list);
      return { kind: 'listed', reason: 'no-cursor' };
    }
    const changed = new Set<string>();
    let events = 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      const end = await this.watchFrom(list, (key) => {
        changed.add(key);
        events++;
      });
      if (end.kind === 'caught-up') return { kind: 'watched', changed, events };
      if (end.kind === 'expired' || end.kind === 'error-event') {
        await this.relist(list);
        return { kind: 'listed', reason: end.kind };
      }
    }
    await this.relist(list);
    return { kind: 'listed', reason: 'cut' };
  }

  /** Applies one event to `objects`; returns its key, or null for an object without a name. */
  private apply(objects: Map<string, T>, type: string, raw: unknown): string | null {
    const key = keyOf(raw);
    if (key === null) return null;
    const parsed = type === 'DELETED' ? null : this.source.parse(raw);
    if (parsed === null) objects.delete(key);
    else objects.set(key, parsed);
    return key;
  }

  /** One watch from `list.resourceVersion`, applying events as they come. */
  private watchFrom(list: FollowedList<T>, onChange: (key: string) => void): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve) => {
      let ended = false;
      let controller: AbortController | undefined;
      const finish = (end: WatchEnd) => {
        if (ended) return;
        ended = true;
        clearTimeout(stuck);
        controller?.abort();
        resolve(end);
      };
      const stuck = setTimeout(
        () => finish({ kind: 'cut', error: new Error('the watch outlived its timeout') }),
        (this.watchSeconds + GRACE_SECONDS) * 1000,
      );
      const query: Record<string, string | number | boolean> = {
        resourceVersion: list.resourceVersion as string,
        allowWatchBookmarks: true,
        timeoutSeconds: this.watchSeconds,
      };
      if (this.source.labelSelector) query['labelSelector'] = this.source.labelSelector;
      const onEvent = (type: string, raw: unknown) => {
        if (ended) return;
        if (type === 'ERROR') {
          const status = raw as { code?: unknown; message?: unknown } | null;
          if (status?.code === 410) finish({ kind: 'expired' });
          else finish({ kind: 'error-event', message: String(status?.message ?? 'watch error') });
          return;
        }
        const rv = rvOf(raw);
        if (type === 'BOOKMARK') {
          if (rv !== null) list.resourceVersion = rv;
          finish({ kind: 'caught-up' });
          return;
        }
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
        const key = this.apply(list.objects, type, raw);
        if (rv !== null) list.resourceVersion = rv;
        if (key !== null) onChange(key);
      };
      const onDone = (error: unknown) => {
        if (ended) return;
        // Ended before the bookmark: what came was applied, but this is not known to be all.
        if (error === null || error === undefined)
          finish({ kind: 'cut', error: new Error('the watch ended before its bookmark') });
        else if (codeOf(error) === 410) finish({ kind: 'expired' });
        else finish({ kind: 'cut', error });
      };
      new Watch(this.options.kubeConfig)
        .watch(this.source.path, query, onEvent, onDone)
        .then((c) => {
          controller = c;
          if (ended) c.abort();
        })
        .catch((error: unknown) => finish({ kind: 'cut', error }));
    });
  }
}
