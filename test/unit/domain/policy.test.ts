import {
  DEFAULT_POLICY,
  parsePolicy,
  policyFromObject,
} from '../../../functions/domain/policy/policy.js';
import {
  globMatch,
  resolvePolicy,
  ruleMode,
} from '../../../functions/domain/policy/resolve-policy.js';

const parsed = (text: string) => {
  const r = parsePolicy(text);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

describe('parsePolicy', () => {
  it('gives safe defaults for an empty document', () => {
    const p = parsed('');
    expect(p).toEqual(DEFAULT_POLICY);
    // Rule 4 is the hard-kill fast path: on, after a grace a graceful stop fits in (GAG: 15–26 s),
    // and never while another job of the run runs on a live runner.
    expect(p.rules.hungJob).toEqual({
      enabled: true,
      dryRun: false,
      graceSeconds: 30,
      forceCancelAfterSeconds: 10,
      cancelWithLiveJobs: false,
      retryIntervalSeconds: 5,
      retryForSeconds: 300,
    });
    expect(p.rules.rerunKilledJob.budget).toBe(2);
    // The eight rules the project ships are on by default (a rule added later may be opt-in).
    const shipped = [
      'starvingQueue',
      'freePoisonedSlot',
      'rerunKilledJob',
      'hungJob',
      'orphanRegistration',
      'warnedNode',
      'deprecatedRunner',
      'circuitBreaker',
    ] as const;
    for (const name of shipped) expect([name, p.rules[name].enabled]).toEqual([name, true]);
    expect(p.rules.freePoisonedSlot.graceSeconds).toBeGreaterThanOrEqual(155);
    expect(p.dryRun).toBe(false);
  });

  it('reads YAML and JSON alike, merging over the defaults', () => {
    const yaml = parsed('dryRun: true\nrules:\n  rerunKilledJob:\n    budget: 1\n');
    const json = parsed('{"dryRun": true, "rules": {"rerunKilledJob": {"budget": 1}}}');
    expect(yaml).toEqual(json);
    expect(yaml.rules.rerunKilledJob).toMatchObject({
      budget: 1,
      enabled: true,
      retryIntervalSeconds: 30,
    });
  });

  it('accepts the old name legacyArcGraceSeconds for arcWontRecoverGraceSeconds, the new name winning', () => {
    const old = parsed('rules: { freePoisonedSlot: { legacyArcGraceSeconds: 20 } }');
    expect(old.rules.freePoisonedSlot.arcWontRecoverGraceSeconds).toBe(20);
    expect(old.rules.freePoisonedSlot).not.toHaveProperty('legacyArcGraceSeconds');
    const both = parsed(
      'rules: { freePoisonedSlot: { legacyArcGraceSeconds: 20, arcWontRecoverGraceSeconds: 5 } }',
    );
    expect(both.rules.freePoisonedSlot.arcWontRecoverGraceSeconds).toBe(5);
    const override = parsed(
      'clusters: { prod: { rules: { freePoisonedSlot: { legacyArcGraceSeconds: 7 } } } }',
    );
    expect(
      resolvePolicy(override, { cluster: 'prod' }).rules.freePoisonedSlot
        .arcWontRecoverGraceSeconds,
    ).toBe(7);
    expect(resolvePolicy(override, { cluster: 'other' }).rules.freePoisonedSlot).toMatchObject({
      arcWontRecoverGraceSeconds: 0,
    });
  });

  it('names every bad key path at once', () => {
    const r = parsePolicy(
      [
        'dryRun: "yes"',
        'rules:',
        '  rerunKilledJob: { budget: -1, excludeCauses: [sunspots] }',
        '  freePoisonedSlot: { gracSeconds: 10 }',
        'clusters:',
        '  prod: { scaleSets: { big: { rules: { hungJob: { enabled: 1 } } } } }',
        'colour: blue',
      ].join('\n'),
    );
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^dryRun: /),
        expect.stringMatching(/^rules\.rerunKilledJob\.budget: /),
        expect.stringMatching(/^rules\.rerunKilledJob\.excludeCauses\.0: /),
        'rules.freePoisonedSlot.gracSeconds: unknown key',
        expect.stringMatching(/^clusters\.prod\.scaleSets\.big\.rules\.hungJob\.enabled: /),
        'colour: unknown key',
      ]),
    );
    expect(errors).toHaveLength(6);
  });

  it.each([['dryRun: [unclosed'], ['a: b: c']])(
    'reports broken YAML %j without throwing',
    (text) => {
      const r = parsePolicy(text);
      expect(r.ok).toBe(false);
    },
  );

  it('rejects a non-object document', () => {
    expect(policyFromObject([1, 2]).ok).toBe(false);
  });
});

describe('resolvePolicy', () => {
  const policy = parsed(`
allow:
  clusters: [prod-*, staging]
  namespaces: [arc-runners, staging/arc-*]
  repositories: [acme/*, other/app]
rules:
  freePoisonedSlot: { graceSeconds: 60 }
scaleSets:
  gpu: { rules: { rerunKilledJob: { budget: 1 } } }
clusters:
  prod-eu:
    rules: { freePoisonedSlot: { graceSeconds: 30 } }
    scaleSets:
      gpu: { dryRun: true, rules: { rerunKilledJob: { budget: 0 } } }
      legacy: { enabled: false }
`);

  it.each([
    ['prod-eu', 'arc-runners', 'small', 'acme/app', true, null],
    ['dev', 'arc-runners', 'small', 'acme/app', false, 'cluster dev'],
    ['prod-us', 'kube-system', 'small', null, false, 'namespace prod-us/kube-system'],
    ['staging', 'arc-x', 'small', null, true, null],
    ['staging', 'arc-runners', 'small', null, true, null],
    ['prod-eu', 'arc-runners', 'small', 'evil/app', false, 'repository evil/app'],
    ['prod-eu', 'arc-runners', 'legacy', 'acme/app', false, 'switched off'],
  ])('%s/%s/%s/%s allowed=%s', (cluster, namespace, scaleSet, repo, allowed, denial) => {
    const e = resolvePolicy(policy, { cluster, namespace, scaleSet, repo });
    expect(e.allowed).toBe(allowed);
    if (denial) expect(e.denial).toContain(denial);
    else expect(e.denial).toBeNull();
  });

  it.each([
    ['prod-us', 'small', 60, 2, false],
    ['prod-eu', 'small', 30, 2, false],
    ['prod-us', 'gpu', 60, 1, false],
    ['prod-eu', 'gpu', 30, 0, true],
  ])(
    'overrides for %s/%s: grace %d, budget %d, dryRun %s',
    (cluster, scaleSet, grace, budget, dryRun) => {
      const e = resolvePolicy(policy, { cluster, scaleSet });
      expect(e.rules.freePoisonedSlot.graceSeconds).toBe(grace);
      expect(e.rules.rerunKilledJob.budget).toBe(budget);
      expect(e.dryRun).toBe(dryRun);
    },
  );

  it('a global dryRun cannot be undone by an override', () => {
    const p = parsed('dryRun: true\nclusters: { c1: { dryRun: false } }');
    expect(resolvePolicy(p, { cluster: 'c1' }).dryRun).toBe(true);
    expect(ruleMode(resolvePolicy(p, { cluster: 'c1' }), 'freePoisonedSlot')).toEqual({
      on: true,
      dryRun: true,
    });
  });

  it('ruleMode: rule 4 is switched off by policy, a rule-level dryRun applies', () => {
    const p = parsed('rules: { starvingQueue: { dryRun: true }, hungJob: { enabled: false } }');
    const e = resolvePolicy(p, { cluster: 'any' });
    expect(ruleMode(e, 'hungJob').on).toBe(false);
    expect(ruleMode(resolvePolicy(parsed(''), { cluster: 'any' }), 'hungJob').on).toBe(true);
    expect(ruleMode(e, 'starvingQueue')).toEqual({ on: true, dryRun: true });
    expect(ruleMode(e, 'rerunKilledJob')).toEqual({ on: true, dryRun: false });
  });

  it.each([
    ['acme/*', 'acme/app', true],
    ['acme/*', 'acmex/app', false],
    ['*', 'x', true],
    ['a.b', 'axb', false],
  ])('globMatch(%s, %s) = %s', (p, v, m) => {
    expect(globMatch(p, v)).toBe(m);
  });
});

describe('per-cluster and per-scale-set allowlists narrow the global ones', () => {
  const p = parsed(`
allow: { repositories: ['acme/*'] }
clusters:
  prod:
    allow: { namespaces: [arc-prod] }
    scaleSets:
      gpu: { allow: { repositories: [acme/ml] } }
`);
  it.each([
    ['prod', 'arc-prod', 'small', 'acme/app', null],
    ['prod', 'arc-dev', 'small', 'acme/app', 'namespace prod/arc-dev'],
    ['prod', 'arc-prod', 'gpu', 'acme/ml', null],
    ['prod', 'arc-prod', 'gpu', 'acme/app', 'repository acme/app'],
    ['dev', 'arc-dev', 'gpu', 'acme/app', null],
    ['dev', 'arc-dev', 'gpu', 'evil/app', 'repository evil/app'],
  ])('%s/%s/%s/%s', (cluster, namespace, scaleSet, repo, denial) => {
    const e = resolvePolicy(p, { cluster, namespace, scaleSet, repo });
    if (denial) expect(e.denial).toContain(denial);
    else expect(e.denial).toBeNull();
  });

  it('names a bad key inside an override allowlist', () => {
    const r = parsePolicy('clusters: { prod: { allow: { clusterz: [x] } } }');
    expect(!r.ok && r.errors).toEqual(['clusters.prod.allow.clusterz: unknown key']);
  });
});

it('reports an alias to a missing anchor as a document error', () => {
  const r = parsePolicy('dryRun: *missing');
  expect(r.ok).toBe(false);
  expect(!r.ok && r.errors[0]).toMatch(/^\(document\): /);
});
