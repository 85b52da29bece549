import {
  followedAttempts,
  parseScenario,
  ScenarioError,
} from '../../../sandbox/scenario/scenario-schema.js';

const withFault = (fault: string) => `
name: tiny
clusters:
  - name: c1
    arcVersion: '0.13'
    nodes: [{ name: n1, instanceId: i-0abc }]
    scaleSets: [{ name: arc, owner: acme }]
repos:
  - name: acme/app
    workflows: [{ name: ci, jobs: [{ name: e2e, runsOn: arc }] }]
runs: [{ at: 0, repo: acme/app, workflow: ci }]
faults: [${fault}]
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

describe('a fault that follows its job across attempts (onAttempts)', () => {
  it('follows the job a pod fault or a node fault names', () => {
    const pod = parseScenario(
      withFault(
        '{ kind: evict-pod, at: 54, cluster: c1, target: { runnerOfJob: e2e }, onAttempts: [1, 2, 3] }',
      ),
    );
    expect(pod.faults.map(followedAttempts)).toEqual([{ job: 'e2e', attempts: [1, 2, 3] }]);
    const node = parseScenario(
      withFault('{ kind: delete-node, at: 30, cluster: c1, nodeOfJob: e2e, onAttempts: [2] }'),
    );
    expect(node.faults.map(followedAttempts)).toEqual([{ job: 'e2e', attempts: [2] }]);
  });

  it('leaves a fault without onAttempts to fire once at its time', () => {
    const once = parseScenario(
      withFault('{ kind: kill-pod, at: 54, cluster: c1, target: { runnerOfJob: e2e } }'),
    );
    expect(once.faults.map(followedAttempts)).toEqual([undefined]);
  });

  it.each([
    [
      'a target that names no job',
      '{ kind: kill-pod, at: 5, cluster: c1, target: { scaleSet: arc }, onAttempts: [1] }',
      /faults\.0\.onAttempts: only with target runnerOfJob or nodeOfJob/,
    ],
    [
      'a node named rather than a job',
      '{ kind: delete-node, at: 5, cluster: c1, node: n1, onAttempts: [1] }',
      /faults\.0\.onAttempts: only with target runnerOfJob or nodeOfJob/,
    ],
    [
      'an attempt listed twice',
      '{ kind: kill-pod, at: 5, cluster: c1, target: { runnerOfJob: e2e }, onAttempts: [1, 1] }',
      /faults\.0\.onAttempts: each attempt once/,
    ],
    [
      'attempt 0',
      '{ kind: kill-pod, at: 5, cluster: c1, target: { runnerOfJob: e2e }, onAttempts: [0] }',
      /faults\.0\.onAttempts\.0/,
    ],
    [
      'a fault kind that cannot follow a job',
      '{ kind: node-pressure, at: 5, cluster: c1, node: n1, durationSeconds: 5, onAttempts: [1] }',
      /faults\.0/,
    ],
  ])('rejects %s', (_name, fault, message) => {
    expect(problemsOf(withFault(fault)).join('\n')).toMatch(message);
  });
});
