import { describeWatchCursorsContract } from './contract/watch-cursors-contract.js';
import { sqliteInTempFolder } from './contract/sqlite-temp.js';

describeWatchCursorsContract('SqliteWatchCursors on a file', async () => {
  const { stores, close } = sqliteInTempFolder('watch-cursors');
  return { cursors: stores.watchCursors, close };
});
