import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScenarioError, parseScenario } from '../../../sandbox/scenario/scenario-schema.js';

const dir = 'test/scenarios';
const shipped = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

const minimal = `
name: tiny
clusters:
  - name: c1
    arcVersion: '0.13'
    nodes: [{ name: n1, instanceId: i-0abc }]
    scaleSets: [{ name: arc, owner: acme }]
repos:
  - name: acme/app
    workflows: [{ name: ci, jobs: [{ name: build, runsOn: arc }] }]
runs: [{ at: 0, repo: acme/app, workflow: ci }]
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

describe('scenario files', () => {
  it('ships the scenarios the project is judged on', () => {
    expect(shipped.sort()).toEqual([
      'arc-0.15-seed-evicted-before-pickup.yaml',
      'arc-0.15-seed-karpenter-mid-job.yaml',
      'deprecated-runner.yaml',
      'drained-every-attempt.yaml',
      'evicted-arc-0.13.yaml',
      'evicted-every-attempt.yaml',
      'fail-fast-matrix.yaml',
      'genuine-failure-beside-killed-job.yaml',
      'genuine-failure.yaml',
      'graceful-drain-mid-job.yaml',
      'hard-kill-after-sweep-arc-0-15.yaml',
      'hard-kill-after-sweep-with-finished-sibling-arc-0-15.yaml',
      'hard-kill-healthy-sibling-opt-in.yaml',
      'hard-kill-healthy-sibling.yaml',
      'hard-kill-mid-job-arc-0-15.yaml',
      'hard-kill-mid-job.yaml',
      'hard-kill-spot-reclaim.yaml',
      'hard-kill-with-finished-sibling-arc-0-15.yaml',
      'karpenter-graceful-stop.yaml',
      'killed-again-after-rerun.yaml',
      'mass-loss-consolidation-50.yaml',
      'node-deleted-pod-notfound.yaml',
      'non-runner-pod-evicted.yaml',
      'seed-evicted-before-pickup.yaml',
      'seed-karpenter-mid-job.yaml',
      'spot-interruption-two-jobs-same-run.yaml',
      'sweep-alone-frees-poisoned-slot.yaml',
      'two-clusters-outage.yaml',
    ]);
  });

  it.each(shipped)('%s says which ARC version it models', (file) => {
    expect(readFileSync(join(dir, file), 'utf8')).toMatch(/^\s+arcVersion: '0\.(9|13|15)'$/m);
  });

  it.each(shipped)('%s is valid and named after its file', (file) => {
    const scenario = parseScenario(readFileSync(join(dir, file), 'utf8'), file);
    expect(`${scenario.name}.yaml`).toBe(file);
  });

  it('fills in defaults for a minimal scenario', () => {
    const s = parseScenario(minimal);
    expect(s.seed).toBe(1);
    expect(s.clusters[0]?.scaleSets[0]).toMatchObject({
      namespace: 'arc-runners',
      minRunners: 0,
      maxRunners: 10,
    });
    expect(s.rates.eventDrop).toBe(0);
    expect(s.remediation.sweepSeconds).toBe(60);
  });

  it.each([
    ['broken YAML', 'name: [', /not valid YAML/],
    ['an unknown ARC version', minimal.replace("'0.13'", "'0.7'"), /clusters\.0\.arcVersion/],
    ['an unknown key', `${minimal}\nsurprise: 1\n`, /surprise/],
    ['a bad instance id', minimal.replace('i-0abc', 'node-1'), /clusters\.0\.nodes\.0\.instanceId/],
    [
      'a fault on an unknown cluster',
      `${minimal}\nfaults: [{ kind: delete-node, at: 5, cluster: c9, node: n1 }]\n`,
      /faults\.0\.cluster: no cluster named c9/,
    ],
    [
      'a fault on an unknown node',
      `${minimal}\nfaults: [{ kind: delete-node, at: 5, cluster: c1, node: n7 }]\n`,
      /faults\.0\.node: no node n7/,
    ],
    [
      'a node fault naming no node',
      `${minimal}\nfaults: [{ kind: delete-node, at: 5, cluster: c1 }]\n`,
      /faults\.0: give exactly one of node or nodeOfJob/,
    ],
    [
      'a run of an unknown workflow',
      minimal.replace('workflow: ci }]', 'workflow: cd }]'),
      /runs\.0\.workflow/,
    ],
    ['a probability above 1', `${minimal}\nrates: { eventDrop: 1.5 }\n`, /rates\.eventDrop/],
  ])('rejects %s with a message naming the key', (_name, text, message) => {
    const problems = problemsOf(text);
    expect(problems.join('\n')).toMatch(message);
  });
});
