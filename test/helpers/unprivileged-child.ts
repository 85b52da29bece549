import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Tests run as root start some children as an unprivileged user (the pod's uid), who must be able
 * to reach the repository's files and Node through every parent folder. A parent folder closed
 * to others (mode 0700, as `mktemp -d` and /root are) makes the child's spawn fail with EACCES;
 * this names that folder, so the test can say what to change instead of failing obscurely.
 */
export function assertReachableByOthers(path: string): void {
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0)
      throw new Error(
        `${dir} is closed to other users (mode ${(statSync(dir).mode & 0o777).toString(8)}): ` +
          'this test runs a child as an unprivileged user, who must reach the repository; ' +
          `run it from a checkout every parent folder of which others may enter (chmod o+x ${dir})`,
      );
    if (dirname(dir) === dir) return;
  }
}
