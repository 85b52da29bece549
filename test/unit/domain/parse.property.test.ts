import fc from 'fast-check';
import { parseCloudWatchKubeEvents } from '../../../functions/domain/parse/parse-cloudwatch-logs.js';
import { parseClusterInput } from '../../../functions/domain/parse/parse-cluster-input.js';
import { parseEc2Event } from '../../../functions/domain/parse/parse-ec2-event.js';
import {
  parseEphemeralRunner,
  parseNode,
  parsePod,
} from '../../../functions/domain/parse/parse-kube-object.js';
import { parsePolicy, policyFromObject } from '../../../functions/domain/policy/policy.js';
import { exportedEvent, rawEr, rawPod } from './fixtures.js';

const parsers: [string, (raw: unknown) => { ok: boolean }][] = [
  ['parseClusterInput', (raw) => parseClusterInput(raw, { defaultCluster: 'c' })],
  ['parseCloudWatchKubeEvents', (raw) => parseCloudWatchKubeEvents(raw)],
  ['parseEc2Event', parseEc2Event],
  ['parsePod', (raw) => parsePod(raw, 'c')],
  ['parseEphemeralRunner', (raw) => parseEphemeralRunner(raw, 'c')],
  ['parseNode', (raw) => parseNode(raw, 'c')],
  ['policyFromObject', policyFromObject],
];

/** Real shapes with random values swapped in at random paths. */
const mangled = fc
  .tuple(
    fc.constantFrom<object>(
      rawPod(),
      rawEr({ failures: { a: true } }),
      exportedEvent({ reason: 'Evicted', message: 'x' }),
    ),
    fc.array(
      fc.tuple(
        fc.array(
          fc.constantFrom(
            'metadata',
            'status',
            'spec',
            'labels',
            'failures',
            'involvedObject',
            'name',
            'uid',
            'a',
          ),
          { minLength: 1, maxLength: 3 },
        ),
        fc.anything(),
      ),
      { maxLength: 4 },
    ),
  )
  .map(([base, edits]) => {
    const copy = structuredClone(base) as Record<string, unknown>;
    for (const [path, value] of edits) {
      let at: Record<string, unknown> = copy;
      for (const key of path.slice(0, -1)) {
        const next = at[key];
        if (typeof next !== 'object' || next === null) break;
        at = next as Record<string, unknown>;
      }
      at[path[path.length - 1] ?? 'x'] = value;
    }
    return copy;
  });

describe('parsers never throw, whatever they get', () => {
  it.each(parsers)('%s', (_, parse) => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), mangled), (raw) => {
        expect(typeof parse(raw).ok).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });

  it('parsePolicy', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          expect(typeof parsePolicy(text).ok).toBe('boolean');
        },
      ),
      { numRuns: 300 },
    );
  });
});
