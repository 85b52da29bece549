import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertReachableByOthers } from '../../helpers/unprivileged-child.js';

test('names the parent folder closed to other users, and passes once it is open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reach-'));
  try {
    const inner = join(dir, 'repo', 'node_modules');
    mkdirSync(inner, { recursive: true });
    chmodSync(dir, 0o700);
    expect(() => assertReachableByOthers(inner)).toThrow(
      `${dir} is closed to other users (mode 700)`,
    );
    chmodSync(dir, 0o755);
    expect(() => assertReachableByOthers(inner)).not.toThrow();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
