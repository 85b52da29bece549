/**
 * Watch streams: newline-delimited `{type, object}` events, replay from a resourceVersion,
 * 410 Gone (as an ERROR event, like the real server) when it is older than the history,
 * selector transitions (ADDED/DELETED when an object enters/leaves the selection), bookmarks.
 * The history is bounded (ObjectStore's historyLimit), as etcd's compaction bounds the real one:
 * kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes and
 * #410-gone-responses ("clients must handle the case by recognizing the status code 410 Gone").
 *
 * As the API server's watch cache (k8s.io/apiserver pkg/storage/cacher):
 * - a resourceVersion older than the cache's window is answered with one ERROR event, a Status
 *   410 `Expired` "too old resource version: <rv> (<oldest>)" (watch_cache.go,
 *   getAllEventsSinceLocked: errors.NewResourceExpired), on a 200 response, and the stream ends;
 * - with allowWatchBookmarks, a BOOKMARK carrying the current resourceVersion comes every
 *   bookmark period (cacher's bookmarkFrequency, a minute there) and, when the request set
 *   timeoutSeconds, 2 s before that deadline if sooner (cache_watcher.go, nextBookmarkTime:
 *   "right before the watcher timeout ... 2s before the deadline"); none if the deadline is
 *   closer than 2 s. A bookmark promises every event up to its resourceVersion was sent.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../types.js';
import { resourceKey, apiVersionOf, type ResourceDef } from './resources.js';
import type { StoreEvent } from './store.js';
import type { KubeApi } from './kube-api.js';

export interface WatchParams {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
  /** Real milliseconds between bookmarks. */
  bookmarkIntervalMs: number;
  /** Real milliseconds that one second of `timeoutSeconds` (and of the 2 s before it) lasts. */
  secondMs: number;
  /** Told of each ADDED/MODIFIED/DELETED event sent (the request log counts objects read). */
  onObject?: () => void;
  /** Renders objects of ADDED/MODIFIED/DELETED events (kubectl get -w asks for Tables). */
  render?: (object: KubeObject) => unknown;
}

export function serveWatch(
  api: KubeApi,
  req: IncomingMessage,
  res: ServerResponse,
  p: WatchParams,
  onClose: (stop: () => void) => void,
): void {
  const match = api.matcher(p.def, p);
  const key = resourceKey(p.def);
  const inScope = (o: KubeObject) =>
    (!p.def.namespaced || p.namespace === undefined || o.metadata.namespace === p.namespace) &&
    (p.name === undefined || o.metadata.name === p.name);
  const selected = (o: KubeObject | undefined) => !!o && inScope(o) && match(o);

  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  let open = true;
  const send = (type: string, object: unknown) => {
    const rendered =
      p.render && type !== 'ERROR' && type !== 'BOOKMARK' ? p.render(object as KubeObject) : object;
    if (!open) return;
    if (type !== 'ERROR' && type !== 'BOOKMARK') p.onObject?.();
    res.write(JSON.stringify({ type, object: rendered }) + '\n');
  };
  const forward = (ev: StoreEvent) => {
    if (ev.resource !== key) return;
    const now = selected(ev.object);
    const before = ev.type === 'ADDED' ? false : selected(ev.previous);
    if (ev.type === 'DELETED') {
      if (before) send('DELETED', ev.object);
    } else if (now && before) send('MODIFIED', ev.object);
    else if (now) send('ADDED', ev.object);
    else if (before) send('DELETED', ev.object);
  };

  const store = api.store;
  const rv = p.resourceVersion;
  if (rv && rv !== '0' && !/^\d+$/.test(rv)) {
    send('ERROR', status(400, 'BadRequest', `invalid resource version: ${rv}`));
    open = false;
    res.end();
    return;
  }
  if (!rv || rv === '0') {
    for (const o of store.scan(key, p.def.namespaced ? p.namespace : undefined))
      if (selected(o)) send('ADDED', o);
  } else {
    const changes = store.changesSince(Number(rv));
    if (changes === 'expired') {
      send(
        'ERROR',
        status(410, 'Expired', `too old resource version: ${rv} (${store.oldestResumableRv()})`),
      );
      open = false;
      res.end();
      return;
    }
    for (const ev of changes) forward(ev);
  }
  if (store.watchFault?.(key) === 'cut') {
    open = false;
    res.destroy();
    return;
  }
  const unsubscribe = store.subscribe(forward);
  const timers: NodeJS.Timeout[] = [];
  if (p.allowWatchBookmarks) {
    const bookmark = () =>
      send('BOOKMARK', {
        kind: p.def.kind,
        apiVersion: apiVersionOf(p.def),
        metadata: { resourceVersion: String(store.currentRv()) },
      });
    timers.push(setInterval(bookmark, p.bookmarkIntervalMs));
    const beforeDeadlineMs = ((p.timeoutSeconds ?? 0) - 2) * p.secondMs;
    if (beforeDeadlineMs > 0 && beforeDeadlineMs < p.bookmarkIntervalMs)
      timers.push(setTimeout(bookmark, beforeDeadlineMs));
  }
  if (p.timeoutSeconds && p.timeoutSeconds > 0)
    timers.push(setTimeout(() => stop(), p.timeoutSeconds * p.secondMs));
  const stop = () => {
    if (!open) return;
    open = false;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    res.end();
  };
  req.on('close', stop);
  res.on('close', stop);
  onClose(stop);
}

function status(code: number, reason: string, message: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
}
