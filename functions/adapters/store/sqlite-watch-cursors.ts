import type { WatchCursor, WatchCursors } from '../../ports/watch-cursors.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** One row per cluster in the facts table, keyed as the DynamoDB item is. */
const PARTITION = 'WATCH-CURSOR';
/** A cursor not written for this long is of no use (etcd compacted past it long ago). */
const KEEP_SECONDS = 24 * 3600;

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Where the sweep resumes following each cluster's runners, over SQLite. */
export class SqliteWatchCursors implements WatchCursors {
  constructor(private readonly db: SqliteDatabase) {}

  async read(cluster: string, now: number): Promise<WatchCursor | null> {
    const row = this.db.read(`read the watch cursor of ${cluster}`, () =>
      this.db
        .statement('SELECT item FROM facts WHERE pk = ? AND sk = ? AND expires_at >= ?')
        .get(PARTITION, `CLUSTER#${cluster}`, seconds(now)),
    );
    if (typeof row?.item !== 'string') return null;
    const item = JSON.parse(row.item) as Record<string, unknown>;
    const { scopes, listedAt, pending } = item;
    if (typeof scopes !== 'object' || scopes === null || typeof listedAt !== 'number') return null;
    return {
      scopes: scopes as WatchCursor['scopes'],
      listedAt,
      pending: Array.isArray(pending) ? pending.filter((n) => typeof n === 'string') : [],
    };
  }

  async write(cluster: string, cursor: WatchCursor, now: number): Promise<void> {
    const expiresAt = seconds(now) + KEEP_SECONDS;
    const item = {
      pk: PARTITION,
      sk: `CLUSTER#${cluster}`,
      type: 'cursor',
      scopes: cursor.scopes,
      listedAt: cursor.listedAt,
      pending: cursor.pending,
      expiresAt,
    };
    this.db.transaction(`write the watch cursor of ${cluster}`, () => {
      this.db
        .statement('INSERT OR REPLACE INTO facts (pk, sk, expires_at, item) VALUES (?, ?, ?, ?)')
        .run(item.pk, item.sk, expiresAt, JSON.stringify(item));
    });
  }
}
