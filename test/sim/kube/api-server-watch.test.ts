/**
 * The API server twin's lists and watches: paging with limit and continue, informers across
 * 410 Gone, bookmarks, and watch events as objects enter and leave a selector.
 */
import { makeInformer, Watch, type V1Pod } from '@kubernetes/client-node';
import { NS, expectApiError, useApiServer } from './api-server-fixture.js';
import { eventually, minimalPod } from './helpers.js';

describe('Kubernetes API server twin: lists, paging and watches', () => {
  const twin = useApiServer();

  it('paginates 5,000 objects with limit and continue', async () => {
    for (let i = 0; i < 5000; i++)
      twin.server.api.create(
        'scenario',
        'pods',
        NS,
        minimalPod(`pod-${String(i).padStart(4, '0')}`),
      );
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await twin.core.listNamespacedPod({
        namespace: NS,
        limit: 700,
        _continue: token,
      });
      pages++;
      names.push(...page.items.map((p) => p.metadata?.name as string));
      if (page.metadata?._continue)
        expect(page.metadata.remainingItemCount).toBe(5000 - names.length);
      token = page.metadata?._continue;
    } while (token);
    expect(pages).toBe(8);
    expect(new Set(names).size).toBe(5000);
    await expectApiError(
      twin.core.listNamespacedPod({ namespace: NS, limit: 10, _continue: 'garbage!' }),
      400,
    );
  });

  it('feeds an informer (list + watch) and recovers from 410 Gone by re-listing', async () => {
    const path = `/api/v1/namespaces/${NS}/pods`;
    const informer = makeInformer<V1Pod>(twin.kc, path, () =>
      twin.core.listNamespacedPod({ namespace: NS }),
    );
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add:${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update:${p.metadata?.name}:${p.status?.phase}`));
    informer.on('delete', (p) => seen.push(`delete:${p.metadata?.name}`));
    twin.server.api.create('scenario', 'pods', NS, minimalPod('before'));
    await informer.start();
    try {
      await eventually(() => seen.includes('add:before'));
      twin.server.api.create('scenario', 'pods', NS, minimalPod('during'));
      twin.server.api.modify(
        'kubelet',
        'pods',
        NS,
        'during',
        (p) => void ((p.status as { phase: string }).phase = 'Running'),
        { subresource: 'status' },
      );
      twin.server.api.delete('scenario', 'pods', NS, 'before');
      await eventually(
        () => seen.includes('delete:before') && seen.includes('update:during:Running'),
      );

      // Expire the history and cut the stream: the resumed watch gets 410 and the informer re-lists.
      const listsBefore = twin.server.audit.requests.filter((r) => r.verb === 'list').length;
      twin.server.closeWatches();
      twin.server.api.create('scenario', 'pods', NS, minimalPod('after-gone'));
      twin.server.store.compact();
      await eventually(() => informer.get('after-gone', NS), 10_000);
      expect(twin.server.audit.requests.filter((r) => r.verb === 'list').length).toBeGreaterThan(
        listsBefore,
      );
      expect(
        informer
          .list(NS)
          .map((p) => p.metadata?.name)
          .sort(),
      ).toEqual(['after-gone', 'during']);
    } finally {
      await informer.stop();
    }
  });

  it('sends bookmarks when asked and 410 Gone for a compacted resourceVersion', async () => {
    const watch = new Watch(twin.kc);
    const events: { type: string; rv?: string; code?: number }[] = [];
    const req = await watch.watch(
      `/api/v1/namespaces/${NS}/pods`,
      { allowWatchBookmarks: true },
      (type, obj: { metadata?: { resourceVersion?: string }; code?: number }) =>
        events.push({ type, rv: obj.metadata?.resourceVersion, code: obj.code }),
      () => undefined,
    );
    await eventually(() => events.some((e) => e.type === 'BOOKMARK'));
    req.abort();

    twin.server.api.create('scenario', 'pods', NS, minimalPod('x'));
    const oldRv = twin.server.store.currentRv() - 1;
    twin.server.store.compact();
    const gone: { type: string; code?: number }[] = [];
    let done = false;
    await watch.watch(
      `/api/v1/namespaces/${NS}/pods`,
      { resourceVersion: String(oldRv) },
      (type, obj: { code?: number }) => gone.push({ type, code: obj.code }),
      () => (done = true),
    );
    await eventually(() => done);
    expect(gone).toEqual([{ type: 'ERROR', code: 410 }]);
  });

  it('sends ADDED when an object starts matching the selector and DELETED when it stops', async () => {
    twin.server.api.create(
      'scenario',
      'pods',
      NS,
      minimalPod('p', { metadata: { name: 'p', labels: { role: 'idle' } } }),
    );
    const seen: string[] = [];
    const req = await new Watch(twin.kc).watch(
      `/api/v1/namespaces/${NS}/pods`,
      { labelSelector: 'role=busy', resourceVersion: String(twin.server.store.currentRv()) },
      (type, obj: { metadata: { labels: Record<string, string> } }) =>
        seen.push(`${type}:${obj.metadata.labels.role}`),
      () => undefined,
    );
    await new Promise((r) => setTimeout(r, 50));
    twin.server.api.modify(
      'scenario',
      'pods',
      NS,
      'p',
      (o) => void (o.metadata.labels = { role: 'busy' }),
    );
    twin.server.api.modify(
      'scenario',
      'pods',
      NS,
      'p',
      (o) => void (o.metadata.labels = { role: 'busy', extra: 'x' }),
    );
    twin.server.api.modify(
      'scenario',
      'pods',
      NS,
      'p',
      (o) => void (o.metadata.labels = { role: 'idle' }),
    );
    twin.server.api.create(
      'scenario',
      'pods',
      NS,
      minimalPod('q', { metadata: { name: 'q', labels: { role: 'busy' } } }),
    );
    twin.server.api.delete('scenario', 'pods', NS, 'q');
    await eventually(() => seen.length >= 5);
    req.abort();
    expect(seen).toEqual([
      'ADDED:busy',
      'MODIFIED:busy',
      'DELETED:idle',
      'ADDED:busy',
      'DELETED:busy',
    ]);
  });
});
