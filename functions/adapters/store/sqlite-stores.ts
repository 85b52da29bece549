import { systemClock, type Clock } from '../../ports/clock.js';
import { SqliteDatabase, type SqliteOptions } from './sqlite-database.js';
import { SqliteDeliveryLedger } from './sqlite-delivery-ledger.js';
import { SqliteFactsStore } from './sqlite-facts-store.js';
import { SqliteWatchCursors } from './sqlite-watch-cursors.js';

/** The stores of one process, over one SQLite file. */
export interface SqliteStores {
  facts: SqliteFactsStore;
  ledger: SqliteDeliveryLedger;
  /** Where the sweep resumes watching each cluster's runners. */
  watchCursors: SqliteWatchCursors;
  /** The file the stores use. */
  path: string;
  /** Deletes every row past its time to live by the clock; returns how many. */
  purgeExpired(): number;
  close(): void;
}

/**
 * Opens (creating it when missing) the SQLite store at `path` for the facts store, the delivery
 * ledger and the watch cursors, and purges what expired by `clock`. Several processes may open
 * one file: each conditional write is a transaction that holds the file's write lock.
 *
 * Throws a StoreError (kind `unavailable`) naming the path when the file cannot be opened or
 * set up (no such folder, no permission, not a database, a newer layout, no WAL): the caller
 * reports itself not ready and never acts, since it holds no claims.
 */
export function openSqliteStores(
  path: string,
  clock: Clock = systemClock,
  options: SqliteOptions = {},
): SqliteStores {
  const db = new SqliteDatabase(path, options);
  const purgeExpired = () => db.purgeExpired(Math.floor(clock.now() / 1000));
  try {
    purgeExpired();
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    facts: new SqliteFactsStore(db),
    ledger: new SqliteDeliveryLedger(db),
    watchCursors: new SqliteWatchCursors(db),
    path,
    purgeExpired,
    close: () => db.close(),
  };
}
