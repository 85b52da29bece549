import { breakerGates } from '../../../functions/domain/decide/rules/circuit-breaker.js';
import type { Action } from '../../../functions/domain/model/action.js';
import { DEFAULT_POLICY, parsePolicy } from '../../../functions/domain/policy/policy.js';
import { CLUSTER, NS, SCALE_SET } from './fixtures.js';

const scope = {
  cluster: CLUSTER,
  namespace: NS,
  scaleSet: SCALE_SET,
  repo: 'acme/app',
  runnerName: 'arc-runner-set-x7k2p-runner-q9z4d',
  jobUrl: null,
};

const rerun = (o: Partial<Action> = {}): Pick<Action, 'target' | 'scope' | 'dryRun'> => ({
  target: {
    kind: 'rerun-failed-jobs',
    repo: 'acme/app',
    installationId: 7,
    runId: 1,
    runAttempt: 1,
    jobIds: [11],
  },
  scope,
  dryRun: false,
  ...o,
});

describe('the breakers a destructive call passes as it is claimed', () => {
  it('its scale set’s, then its cluster’s, each with its own limit, for the loss of its runner', () => {
    expect(breakerGates(DEFAULT_POLICY, rerun())).toEqual({
      gates: [
        { cluster: CLUSTER, scaleSet: SCALE_SET, limit: 10, windowMs: 900_000 },
        { cluster: CLUSTER, scaleSet: null, limit: 30, windowMs: 900_000 },
      ],
      runner: `${CLUSTER}/${NS}/arc-runner-set-x7k2p-runner-q9z4d`,
    });
  });

  it('an action on no runner and no scale set: the cluster’s breaker, and no loss of its own', () => {
    const bare = rerun({ scope: { ...scope, scaleSet: null, runnerName: null } });
    expect(breakerGates(DEFAULT_POLICY, bare)).toEqual({
      gates: [{ cluster: CLUSTER, scaleSet: null, limit: 30, windowMs: 900_000 }],
      runner: null,
    });
  });

  it('none for a dry run, a call that changes nothing, or an action without a cluster', () => {
    expect(breakerGates(DEFAULT_POLICY, rerun({ dryRun: true })).gates).toEqual([]);
    const alert = rerun({
      target: {
        kind: 'trip-breaker',
        cluster: CLUSTER,
        scaleSet: SCALE_SET,
        losses: 12,
        threshold: 10,
        windowSeconds: 900,
      },
    });
    expect(breakerGates(DEFAULT_POLICY, alert).gates).toEqual([]);
    expect(
      breakerGates(DEFAULT_POLICY, rerun({ scope: { ...scope, cluster: null } })).gates,
    ).toEqual([]);
  });

  it('a breaker switched off for its scale set is not passed; the cluster’s still is', () => {
    const r = parsePolicy(
      `scaleSets: { ${SCALE_SET}: { rules: { circuitBreaker: { enabled: false } } } }`,
    );
    if (!r.ok) throw new Error(r.reason);
    expect(breakerGates(r.value, rerun()).gates).toEqual([
      { cluster: CLUSTER, scaleSet: null, limit: 30, windowMs: 900_000 },
    ]);
  });
});
