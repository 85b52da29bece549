import { buildOutcome } from '../../../sandbox/scenario/outcome.js';
import type { OutcomeInput } from '../../../sandbox/scenario/outcome.js';
import { ScenarioError, parseScenario } from '../../../sandbox/scenario/scenario-schema.js';
import type { Run, Runner } from '../../../sim/github/model/types.js';

const minimal = `
name: tiny
clusters:
  - name: c1
    arcVersion: '0.13'
    nodes: [{ name: n1, instanceId: i-0abc }, { name: n2, instanceId: i-0abd, capacityType: spot, karpenter: false }]
    scaleSets: [{ name: arc, owner: acme }]
repos:
  - name: acme/app
    workflows: [{ name: ci, jobs: [{ name: build, runsOn: arc }] }]
runs: [{ at: 0, repo: acme/app, workflow: ci }, { at: 600, repo: acme/app, workflow: ci }]
`;

function problemsOf(text: string): string[] {
  try {
    parseScenario(text, 'x.yaml');
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems;
    throw error;
  }
  return [];
}

describe('scenario language: what a skeptical platform engineer would try', () => {
  it('uses the measured GitHub timings by default: the 576 s lock, 20 s graceful conclusion, 1 s force-cancel', () => {
    const s = parseScenario(minimal);
    expect(s.github).toEqual({
      lockTtlSeconds: 576,
      gracefulStopConcludeSeconds: 20,
      forceCancelConcludeSeconds: 1,
      alreadyRunningAfterCompletionSeconds: 0,
      cancelFailures: [],
    });
    expect(s.clusters[0]?.nodes.map((n) => [n.capacityType, n.karpenter])).toEqual([
      ['on-demand', true],
      ['spot', false],
    ]);
    expect(s.clusters[0]?.scaleSets[0]?.onSigterm).toBe('default');
  });

  it('reads every new key: pinned graceful-stop runners, faults, GitHub knobs and expectations', () => {
    const s = parseScenario(`${minimal.replace(
      'scaleSets: [{ name: arc, owner: acme }]',
      `scaleSets:
      - name: arc
        owner: acme
        node: n2
        onSigterm: graceful-stop
        gracefulStopTimeoutSeconds: 120
        terminationGracePeriodSeconds: 150
        runnerVersion: 2.328.0
    rbac: { manifests: [infra/kubernetes/rbac/cluster.yaml] }`,
    )}
faults:
  - { kind: node-not-ready, at: 60, cluster: c1, nodeOfJob: build }
  - { kind: terminate-pod, at: 70, cluster: c1, target: { runnerOfJob: build }, gracePeriodSeconds: 10 }
  - { kind: kill-pod, at: 80, cluster: c1, target: { scaleSet: arc, state: idle } }
github:
  gracefulStopConcludeSeconds: 20
  alreadyRunningAfterCompletionSeconds: 600
  cancelFailures: [{ verb: force-cancel, status: 500, times: 2 }, { verb: cancel, status: 409 }]
  runnerDeprecation: { below: 2.329.0 }
expect:
  remediation:
    jobs:
      - { name: build, run: 0, conclusion: success, attempts: 2, lost: true, maxActionSeconds: 5 }
      - { name: build, run: 1, conclusion: success, attempts: 1, lost: false, recovered: false }
    calls: { rerun-failed-jobs: 1, delete: 0 }
    auditEvents:
      - { kind: rerun-failed-jobs, rule: rule-3-rerun-killed-job, outcome: succeeded }
      - { kind: delete-pod, count: 0 }
    untouchedNamespaces: [kube-system]
`);
    expect(s.clusters[0]?.scaleSets[0]).toMatchObject({
      node: 'n2',
      onSigterm: 'graceful-stop',
      gracefulStopTimeoutSeconds: 120,
      runnerVersion: '2.328.0',
    });
    expect(s.faults.map((f) => f.kind)).toEqual(['node-not-ready', 'terminate-pod', 'kill-pod']);
    expect(s.github.runnerDeprecation).toEqual({
      below: '2.329.0',
      runtimeAtSeconds: 0,
      registrationAtSeconds: null,
    });
    expect(s.expect.remediation.calls).toEqual({ 'rerun-failed-jobs': 1, delete: 0 });
    expect(s.expect.remediation.jobs.map((j) => j.run)).toEqual([0, 1]);
  });

  it.each([
    [
      'an ARC version nobody models',
      minimal.replace("'0.13'", "'0.14'"),
      /clusters\.0\.arcVersion/,
    ],
    [
      'a spot node with a misspelt key',
      minimal.replace('karpenter: false', 'karpentr: false'),
      /clusters\.0\.nodes\.1.*karpentr/,
    ],
    [
      'an unknown SIGTERM behaviour',
      minimal.replace('{ name: arc, owner: acme }', '{ name: arc, owner: acme, onSigterm: drain }'),
      /clusters\.0\.scaleSets\.0\.onSigterm/,
    ],
    [
      'a graceful-stop timeout without graceful-stop',
      minimal.replace(
        '{ name: arc, owner: acme }',
        '{ name: arc, owner: acme, gracefulStopTimeoutSeconds: 60 }',
      ),
      /clusters\.0\.scaleSets\.0\.gracefulStopTimeoutSeconds: only with onSigterm: graceful-stop/,
    ],
    [
      'a runner pinned to an unknown node',
      minimal.replace('{ name: arc, owner: acme }', '{ name: arc, owner: acme, node: n9 }'),
      /clusters\.0\.scaleSets\.0\.node: no node n9/,
    ],
    [
      'a runner version that is not one',
      minimal.replace(
        '{ name: arc, owner: acme }',
        '{ name: arc, owner: acme, runnerVersion: latest }',
      ),
      /clusters\.0\.scaleSets\.0\.runnerVersion/,
    ],
    [
      'a cancel failure GitHub never answers',
      `${minimal}\ngithub: { cancelFailures: [{ verb: cancel, status: 502 }] }\n`,
      /github\.cancelFailures\.0\.status/,
    ],
    ['an unknown GitHub knob', `${minimal}\ngithub: { lockTTL: 600 }\n`, /github.*lockTTL/],
    [
      'a node-not-ready fault naming no node',
      `${minimal}\nfaults: [{ kind: node-not-ready, at: 5, cluster: c1 }]\n`,
      /faults\.0: give exactly one of node or nodeOfJob/,
    ],
    [
      'a graceful stop with a negative grace period',
      `${minimal}\nfaults: [{ kind: terminate-pod, at: 5, cluster: c1, target: { runnerOfJob: build }, gracePeriodSeconds: -1 }]\n`,
      /faults\.0\.gracePeriodSeconds/,
    ],
    [
      'an expectation on a run that does not exist',
      `${minimal}\nexpect: { baseline: { jobs: [{ name: build, run: 2 }] } }\n`,
      /expect\.baseline\.jobs\.0\.run: no run 2/,
    ],
    [
      'an audit expectation with an unknown outcome',
      `${minimal}\nexpect: { remediation: { auditEvents: [{ kind: rerun-job, outcome: done }] } }\n`,
      /expect\.remediation\.auditEvents\.0\.outcome/,
    ],
    [
      'a call count that is not a count',
      `${minimal}\nexpect: { remediation: { calls: { delete: -1 } } }\n`,
      /expect\.remediation\.calls\.delete/,
    ],
  ])('rejects %s with a message naming the key', (_name, text, message) => {
    expect(problemsOf(text).join('\n')).toMatch(message);
  });
});

describe('scenario outcome: the new expectations can fail', () => {
  const START = 1_000_000;
  const scenarioWith = (expect: string) =>
    parseScenario(`${minimal}\nexpect:\n  remediation:\n${expect}`);

  function input(expectYaml: string): OutcomeInput {
    const job = (id: number, runId: number, attempt: number, runnerName: string) => ({
      id,
      runId,
      runAttempt: attempt,
      name: 'build',
      labels: ['arc'],
      status: 'completed',
      conclusion: 'success',
      createdAt: START,
      startedAt: START + 10_000 * id,
      runnerName,
    });
    const runs = [
      { id: 1, attempt: 2, jobs: [job(1, 1, 1, 'r1'), job(2, 1, 2, 'r2')] },
      { id: 2, attempt: 1, jobs: [job(3, 2, 1, 'r3')] },
    ] as unknown as Run[];
    const runners = [
      { name: 'r1', jobId: 1, stopped: 'killed', stoppedAt: START + 15_000 },
      { name: 'r2', jobId: 2, stopped: 'completed', stoppedAt: START + 90_000 },
      { name: 'r3', jobId: 3, stopped: 'completed', stoppedAt: START + 90_000 },
    ] as unknown as Runner[];
    return {
      scenario: scenarioWith(expectYaml),
      remediation: true,
      start: START,
      end: START + 3_600_000,
      runs,
      runners,
      githubAudit: [
        {
          at: START + 18_000,
          by: 'runner-medic',
          api: 'github',
          verb: 'rerun-failed-jobs',
          target: 'repos/acme/app/actions/runs/1',
          status: 201,
        },
      ],
      kubeAudit: [
        {
          cluster: 'c1',
          entries: [
            {
              at: START + 16_000,
              by: 'runner-medic',
              api: 'kubernetes',
              verb: 'delete',
              resource: 'ephemeralrunners.actions.github.com',
              namespace: 'arc-runners',
              name: 'r1',
              labels: { 'actions.github.com/scale-set-name': 'arc' },
              ownerReferences: [
                { apiVersion: 'v1', kind: 'EphemeralRunnerSet', name: 'x', uid: 'u' },
              ],
              code: 200,
            },
          ],
        },
      ],
      faults: [],
      remediations: [
        {
          at: START + 18_000,
          detail: {
            key: 'rerun-failed-jobs:acme/app:7:1',
            dryRun: false,
            action: 'rerun-failed-jobs',
            rule: 'rule-3-rerun-killed-job',
            outcome: 'succeeded',
            namespace: 'arc-runners',
          },
        },
      ],
      errors: [],
      rerunBudget: 2,
    };
  }

  it('passes when calls per verb, audit events, namespaces and per-run job expectations all hold', () => {
    const outcome = buildOutcome(
      input(`    jobs:
      - { name: build, run: 0, attempts: 2, lost: true, maxActionSeconds: 3, maxRecoverySeconds: 3 }
      - { name: build, run: 1, attempts: 1, lost: false }
    calls: { delete: 1, rerun-failed-jobs: 1, rerun-job: 0 }
    auditEvents:
      - { kind: rerun-failed-jobs, rule: rule-3-rerun-killed-job, outcome: succeeded, count: 1 }
      - { kind: delete-pod, count: 0 }
    untouchedNamespaces: [web]
`),
    );
    expect(outcome.failedExpectations).toEqual([]);
    expect(outcome.medicCallsByVerb).toEqual({ delete: 1, 'rerun-failed-jobs': 1 });
    expect(outcome.auditEvents).toEqual([
      {
        at: 18,
        key: 'rerun-failed-jobs:acme/app:7:1',
        dryRun: false,
        kind: 'rerun-failed-jobs',
        rule: 'rule-3-rerun-killed-job',
        outcome: 'succeeded',
        namespace: 'arc-runners',
      },
    ]);
    expect(outcome.arcVersions).toEqual({ c1: '0.13' });
  });

  it('names each expectation that does not hold', () => {
    const outcome = buildOutcome(
      input(`    jobs:
      - { name: build, run: 1, attempts: 2, lost: true, recovered: true }
      - { name: build, run: 0, maxActionSeconds: 0.5 }
    calls: { delete: 0 }
    auditEvents:
      - { kind: rerun-failed-jobs, outcome: gave-up }
      - { kind: rerun-failed-jobs, count: 2 }
    untouchedNamespaces: [arc-runners]
`),
    );
    expect(outcome.passed).toBe(false);
    expect(outcome.failedExpectations).toEqual([
      'job build of run 1: not lost, expected lost',
      'job build of run 1: not recovered, expected recovered',
      'job build of run 1: 1 attempts, expected 2',
      'job build of run 0: first action 3 s after the loss, expected at most 0.5 s',
      'runner-medic made 1 delete calls, expected exactly 0',
      'no audit event rerun-failed-jobs gave-up',
      '1 audit events rerun-failed-jobs, expected exactly 2',
      'runner-medic delete c1/ephemeralrunners.actions.github.com/arc-runners/r1, in a namespace it must not touch',
    ]);
  });
});
