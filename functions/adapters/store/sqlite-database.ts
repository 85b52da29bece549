import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StoreError } from '../../ports/delivery-ledger.js';

/** The layout this code writes (`PRAGMA user_version`); a file from a newer layout is refused. */
const SCHEMA_VERSION = 1;

/**
 * The tables. `facts` holds the facts store's items as the DynamoDB table does (one row per
 * `pk`/`sk`, the whole item as JSON, its index keys and time to live as columns, with a partial
 * index per DynamoDB index); the delivery ledger has two tables of its own. `expires_at` is in
 * epoch seconds, as the DynamoDB TTL attribute is: a row past it is read as absent and purged.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS facts (
  pk TEXT NOT NULL,
  sk TEXT NOT NULL,
  expires_at INTEGER,
  rn TEXT,
  run TEXT,
  grp TEXT,
  pend TEXT,
  item TEXT NOT NULL,
  PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS facts_by_runner_name ON facts (rn, sk) WHERE rn IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_by_run ON facts (run, sk) WHERE run IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_by_group ON facts (grp, sk) WHERE grp IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_by_pending ON facts (pend, sk) WHERE pend IS NOT NULL;
CREATE INDEX IF NOT EXISTS facts_by_expiry ON facts (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS deliveries (
  delivery_id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  observation TEXT NOT NULL,
  body_digest TEXT NOT NULL,
  published INTEGER NOT NULL,
  published_at INTEGER,
  received_at INTEGER NOT NULL,
  claimed_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (received_at) WHERE published = 0;
CREATE INDEX IF NOT EXISTS deliveries_by_expiry ON deliveries (expires_at);
CREATE TABLE IF NOT EXISTS delivery_bodies (
  body_digest TEXT PRIMARY KEY,
  delivery_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS delivery_bodies_by_expiry ON delivery_bodies (expires_at);
`;

/** Tables with a time to live (`expires_at`, epoch seconds). */
type ExpiringTable = 'facts' | 'deliveries' | 'delivery_bodies';
const EXPIRING_TABLES: ExpiringTable[] = ['facts', 'deliveries', 'delivery_bodies'];
/** Writes purge expired rows at most this often (seconds of their own `now`)… */
const PURGE_EVERY_S = 300;
/** …and at most this many rows a table at a time; `purgeExpired` takes out the rest. */
const PURGE_BATCH = 500;

export interface SqliteOptions {
  /**
   * How long a write waits for another connection's transaction (ms) before it fails as
   * unavailable. Transactions here are a few statements long, so the wait is short in practice.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/**
 * One connection to the store's file, shared by the facts store and the delivery ledger of one
 * process. WAL lets readers go on while one writer commits; every conditional write is one
 * `BEGIN IMMEDIATE` transaction, which takes the file's write lock before it reads, so two
 * processes (or two connections) on one file cannot both act on what they read. node:sqlite is
 * synchronous: nothing else runs on this thread between BEGIN and COMMIT.
 */
export class SqliteDatabase {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  /** When each table was last purged by a write (seconds of the writes' clock). */
  private readonly lastPurge = new Map<ExpiringTable, number>();

  constructor(
    readonly path: string,
    options: SqliteOptions = {},
  ) {
    try {
      this.db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5000 });
    } catch (error) {
      throw new StoreError(`cannot open the SQLite store at ${path}: ${message(error)}`, {
        cause: error,
      });
    }
    try {
      this.migrate();
    } catch (error) {
      this.db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot open the SQLite store at ${path}: ${message(error)}`, {
        cause: error,
      });
    }
  }

  private migrate(): void {
    const mode = this.db.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode;
    // A claim that was answered must survive a power cut: fsync each commit.
    this.db.exec('PRAGMA synchronous = FULL');
    const version = Number(this.db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
    if (version > SCHEMA_VERSION)
      throw new StoreError(
        `cannot open the SQLite store at ${this.path}: its layout is version ${version}, newer than this runner-medic's ${SCHEMA_VERSION}`,
      );
    if (mode !== 'wal' && this.path !== ':memory:')
      throw new StoreError(
        `cannot open the SQLite store at ${this.path}: the file system refused WAL mode (journal_mode ${String(mode)})`,
      );
    this.transaction('create the store tables', () => {
      this.db.exec(SCHEMA);
      this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    });
  }

  /** A prepared statement, kept for the connection's life. */
  statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs one statement outside a transaction (a single statement reads one snapshot). */
  read<T>(what: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw new StoreError(`could not ${what}: ${message(error)}`, { cause: error });
    }
  }

  /**
   * Runs `body` in one write transaction. `BEGIN IMMEDIATE` waits (busy timeout) for another
   * writer; a wait that runs out, or any failure, rolls back and throws a StoreError, so the
   * caller never acts on a claim the store did not keep. With `purge`, the same transaction
   * deletes up to PURGE_BATCH expired rows of those tables, at most every PURGE_EVERY_S of the
   * writes' own clock: in the transaction, so a write is never reported failed after it committed.
   */
  transaction<T>(
    what: string,
    body: () => T,
    purge?: { nowSeconds: number; tables: ExpiringTable[] },
  ): T {
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw new StoreError(`could not ${what}: ${message(error)}`, { cause: error });
    }
    try {
      const result = body();
      if (purge) this.purgeDue(purge.nowSeconds, purge.tables);
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      if (error instanceof StoreError) throw error;
      throw new StoreError(`could not ${what}: ${message(error)}`, { cause: error });
    }
  }

  private purgeDue(nowSeconds: number, tables: ExpiringTable[]): void {
    for (const table of tables) {
      if (nowSeconds - (this.lastPurge.get(table) ?? -Infinity) < PURGE_EVERY_S) continue;
      this.lastPurge.set(table, nowSeconds);
      const key =
        table === 'facts' ? 'pk, sk' : table === 'deliveries' ? 'delivery_id' : 'body_digest';
      this.statement(
        `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE expires_at < ? LIMIT ${PURGE_BATCH})`,
      ).run(nowSeconds);
    }
  }

  /** Deletes the rows of `tables` past their time to live at `nowSeconds`; returns how many. */
  purgeExpired(nowSeconds: number, tables: ExpiringTable[] = EXPIRING_TABLES): number {
    return this.transaction('purge expired rows', () => {
      let purged = 0;
      for (const table of tables)
        purged += Number(
          this.statement(`DELETE FROM ${table} WHERE expires_at < ?`).run(nowSeconds).changes,
        );
      return purged;
    });
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

/** An error's message; node:sqlite's errors may come from another realm (a vm context). */
const message = (error: unknown) =>
  typeof error === 'object' && error !== null && 'message' in error
    ? String(error.message)
    : String(error);
