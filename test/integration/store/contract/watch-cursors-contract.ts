import type { WatchCursors } from '../../../../functions/ports/watch-cursors.js';

export interface WatchCursorsUnderTest {
  cursors: WatchCursors;
  close(): Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00Z');
const DAY = 24 * 3600 * 1000;

/** The watch cursors' contract, one suite for every implementation. */
export function describeWatchCursorsContract(
  name: string,
  open: () => Promise<WatchCursorsUnderTest>,
): void {
  describe(name, () => {
    let subject: WatchCursorsUnderTest;
    let cursors: WatchCursors;
    beforeAll(async () => {
      subject = await open();
      cursors = subject.cursors;
    });
    afterAll(() => subject.close());

    const cursor = (rv: string) => ({
      scopes: { 'arc-runners': { ephemeralrunners: rv, pods: `${rv}0` }, '*': { pods: rv } },
      listedAt: T0,
      pending: ['arc-runners'],
    });

    it('reads back the cursor written, per cluster, the last write winning', async () => {
      expect(await cursors.read('prod', T0)).toBeNull();
      await cursors.write('prod', cursor('100'), T0);
      await cursors.write('staging', cursor('7'), T0);
      expect(await cursors.read('prod', T0 + 1)).toEqual(cursor('100'));
      await cursors.write('prod', { ...cursor('200'), pending: [] }, T0 + 2);
      expect(await cursors.read('prod', T0 + 3)).toEqual({ ...cursor('200'), pending: [] });
      expect(await cursors.read('staging', T0 + 3)).toEqual(cursor('7'));
    });

    it('forgets a cursor not written for a day', async () => {
      await cursors.write('old', cursor('5'), T0);
      expect(await cursors.read('old', T0 + DAY)).toEqual(cursor('5'));
      expect(await cursors.read('old', T0 + DAY + 1_000)).toBeNull();
    });
  });
}
