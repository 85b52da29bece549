import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SCENARIO_DIR, SPOTLIGHT, shard } from '../e2e/scenario-play.js';
import { SERVE_CASES } from './serve-comparison.js';

const SHARDS = 4;

/**
 * serve's plays ride on the scenario suites' Lambda plays: a case whose scenario no suite plays
 * would never be compared, and would pass unseen.
 */
describe('the scenarios compared through serve', () => {
  it.each(SERVE_CASES.map((c) => c.file))(
    '%s is shipped, and played by a scenario suite',
    (file) => {
      expect(existsSync(join(SCENARIO_DIR, file))).toBe(true);
      const shards = Array.from({ length: SHARDS }, (_, i) => shard(i + 1, SHARDS)).flat();
      expect([...SPOTLIGHT, ...shards]).toContain(file);
    },
  );
});
