import { decide } from '../../../functions/domain/decide/decide.js';
import type { BreakerState, Facts } from '../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { evictedRunners, facts } from './builders.js';
import { CLUSTER, SCALE_SET, T0 } from './fixtures.js';

const WINDOW_MS = DEFAULT_POLICY.rules.circuitBreaker.windowSeconds * 1000;

const breaker = (o: Partial<BreakerState>): BreakerState => ({
  cluster: CLUSTER,
  scaleSet: SCALE_SET,
  losses: {},
  trippedAt: null,
  openUntil: null,
  held: [],
  ...o,
});

const kinds = (f: Facts, now: number) =>
  decide(f, DEFAULT_POLICY, now).actions.map((a) => a.target.kind);

describe('the circuit breaker as stored state', () => {
  it('counts confirmed losses other slices stored, and trips with this slice’s one loss on top', () => {
    const threshold = DEFAULT_POLICY.rules.circuitBreaker.maxLossesPerScaleSet;
    const earlier = Object.fromEntries(
      Array.from({ length: threshold - 1 }, (_, i) => [`${CLUSTER}/other/r${i}`, T0 - 1000]),
    );
    const one = evictedRunners(1, T0);
    const now = T0 + 1000;
    expect(kinds(one, now)).not.toContain('trip-breaker');
    expect(kinds({ ...one, breakers: [breaker({ losses: earlier })] }, now)).toContain(
      'trip-breaker',
    );
  });

  it('stays open for its window once tripped, whatever the count, and holds destructive actions', () => {
    const f = {
      ...evictedRunners(1, T0),
      breakers: [breaker({ trippedAt: T0, openUntil: T0 + WINDOW_MS })],
    };
    const late = T0 + WINDOW_MS - 1000;
    const d = decide(f, DEFAULT_POLICY, late);
    expect(d.actions.map((a) => a.target.kind)).not.toContain('delete-ephemeral-runner');
    expect(d.held.map((h) => h.why)).toEqual([expect.stringMatching(/^circuit breaker open/)]);
    expect(d.wakeAt).toBe(T0 + WINDOW_MS);
    // A breaker's timer is not one runner's: the whole slice is decided again.
    expect(d.wakeRunners).toBeNull();
    // After its window it closes and the held work is decided again.
    expect(kinds(f, T0 + WINDOW_MS + 1000)).toContain('delete-ephemeral-runner');
  });

  it('does not count a loss no live object confirms', () => {
    const threshold = DEFAULT_POLICY.rules.circuitBreaker.maxLossesPerScaleSet;
    const many = evictedRunners(threshold + 2, T0);
    const unconfirmed: Facts = facts({
      losses: many.pods.map((p) => ({
        cluster: CLUSTER,
        namespace: p.metadata.namespace,
        runnerName: p.metadata.name,
        podUid: p.metadata.uid,
        nodeName: null,
        scaleSet: SCALE_SET,
        ownedByArc: true,
        cause: { kind: 'pod-gc' as const },
        signal: { source: 'pod-event' as const, detail: 'forged' },
        at: T0,
      })),
    });
    expect(kinds(unconfirmed, T0 + 1000)).not.toContain('trip-breaker');
  });
});
