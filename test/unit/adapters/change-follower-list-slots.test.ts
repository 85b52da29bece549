import pLimit from 'p-limit';
import { KubeConfig } from '@kubernetes/client-node';
import {
  ChangeFollower,
  type FollowedList,
  type RawListPage,
} from '../../../functions/adapters/kubernetes/follow-changes.js';

/**
 * Followers that share list slots list in turn: with 8 slots, 30 first lists start 8 pages, and
 * each page that ends lets the next one start. The source is a stand-in whose pages end when the
 * test says (no client and no socket: only the order is under test).
 */
describe('ChangeFollower list slots', () => {
  it('starts a page only when a slot is free, and every list still completes', async () => {
    const waiting: Array<(page: RawListPage) => void> = [];
    const source = {
      path: '/api/v1/namespaces/x/pods',
      listPage: () => new Promise<RawListPage>((resolve) => waiting.push(resolve)),
      parse: (raw: unknown) => raw,
    };
    const options = { kubeConfig: new KubeConfig(), listSlots: pLimit(8) };
    const lists = Array.from({ length: 30 }, (): FollowedList<unknown> => ({
      objects: new Map(),
      resourceVersion: null,
    }));
    const done = Promise.all(lists.map((l) => new ChangeFollower(source, options).follow(l)));
    const settle = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
    };
    await settle();
    expect(waiting).toHaveLength(8);

    let answered = 0;
    while (answered < 30) {
      const page = waiting[answered];
      if (!page) throw new Error(`page ${answered} never started`);
      page({
        items: [{ metadata: { namespace: 'x', name: `p${answered}` } }],
        next: undefined,
        resourceVersion: String(answered + 1),
      });
      answered++;
      await settle();
      expect(waiting.length - answered).toBe(Math.min(8, 30 - answered));
    }
    const outcomes = await done;
    expect(outcomes.every((o) => o.kind === 'listed')).toBe(true);
    expect(lists.map((l) => l.objects.size)).toEqual(lists.map(() => 1));
  });
});
