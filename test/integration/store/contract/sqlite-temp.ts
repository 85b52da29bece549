import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  openSqliteStores,
  type SqliteStores,
} from '../../../../functions/adapters/store/sqlite-stores.js';
import type { Clock } from '../../../../functions/ports/clock.js';

/** The contract tests' time: the stores purge by it when opened, as the tests' writes do. */
const T0 = Date.parse('2026-03-01T12:00:00Z');

/** SQLite stores on a file in a folder of their own, removed with them. */
export function sqliteInTempFolder(
  name: string,
  clock: Clock = { now: () => T0 },
): { stores: SqliteStores; close(): Promise<void> } {
  const folder = mkdtempSync(join(tmpdir(), `runner-medic-sqlite-${name}-`));
  const stores = openSqliteStores(join(folder, 'store.db'), clock);
  return {
    stores,
    close: async () => {
      stores.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
