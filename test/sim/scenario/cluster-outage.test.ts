import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { SimClock } from '../../../sim/clock.js';
import { ApiServer } from '../../../sim/kube/api/api-server.js';
import { Rng } from '../../../sim/rng.js';
import { buildOutcome } from '../../../sandbox/scenario/outcome.js';
import { ScenarioError, parseScenario } from '../../../sandbox/scenario/scenario-schema.js';
import { unconfiguredClusterEntry } from '../../../sandbox/scenario/unconfigured-cluster-event.js';

const base = `
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

function problemsOf(faults: string): string[] {
  try {
    parseScenario(`${base}faults:\n${faults}`, 'x.yaml');
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems;
    throw error;
  }
  return [];
}

describe('scenario language: a cluster that stops answering, an event from an unconfigured cluster', () => {
  it('accepts both, with their defaults', () => {
    const s = parseScenario(
      `${base}faults:
  - { kind: cluster-unreachable, at: 10, cluster: c1 }
  - { kind: unconfigured-cluster-event, at: 5, clusterName: eks-legacy, pod: arc-x-runner-y }
`,
    );
    expect(s.faults[0]).toEqual({
      kind: 'cluster-unreachable',
      at: 10,
      cluster: 'c1',
      answer: 'refused',
    });
    expect(s.faults[1]).toMatchObject({ namespace: 'arc-runners', reason: 'Evicted' });
  });

  it.each([
    [
      'an unknown answer',
      '  - { kind: cluster-unreachable, at: 1, cluster: c1, answer: 502 }',
      /^faults\.0\.answer: /,
    ],
    [
      'until before at',
      '  - { kind: cluster-unreachable, at: 5, cluster: c1, until: 5 }',
      /^faults\.0\.until: must be after at/,
    ],
    [
      'an unknown cluster',
      '  - { kind: cluster-unreachable, at: 1, cluster: c9 }',
      /^faults\.0\.cluster: no cluster named c9/,
    ],
    [
      'a configured cluster named as unconfigured',
      '  - { kind: unconfigured-cluster-event, at: 1, clusterName: c1, pod: p }',
      /^faults\.0\.clusterName: c1 is a configured cluster/,
    ],
    [
      'a missing pod',
      '  - { kind: unconfigured-cluster-event, at: 1, clusterName: c9 }',
      /^faults\.0\.pod: /,
    ],
  ])('names the key of %s', (_, fault, problem) => {
    const problems = problemsOf(fault);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it('builds the unconfigured cluster event as the exporter does: clusterName, enriched involved object', () => {
    const s = parseScenario(
      `${base}faults:\n  - { kind: unconfigured-cluster-event, at: 5, clusterName: eks-legacy, pod: arc-x-runner-y }\n`,
    );
    const fault = s.faults[0];
    if (fault?.kind !== 'unconfigured-cluster-event') throw new Error('parsed the wrong kind');
    const entry = unconfiguredClusterEntry(fault, Date.parse('2026-03-02T09:00:05Z'));
    expect(entry).toMatchObject({
      source: 'k8s.events',
      'detail-type': 'k8s-event',
      detail: {
        clusterName: 'eks-legacy',
        reason: 'Evicted',
        lastTimestamp: '2026-03-02T09:00:05Z',
        involvedObject: {
          kind: 'Pod',
          namespace: 'arc-runners',
          name: 'arc-x-runner-y',
          labels: { 'actions-ephemeral-runner': 'True' },
          deleted: false,
        },
      },
    });
  });
});

describe('Kubernetes API server twin: an unreachable endpoint, driven by @kubernetes/client-node', () => {
  let server: ApiServer;
  let core: CoreV1Api;

  beforeEach(async () => {
    server = new ApiServer({
      clock: new SimClock(),
      rng: new Rng(3),
      clusterName: 'sim',
      schemaFlavour: '0.13',
    });
    await server.start();
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig('runner-medic'));
    core = kc.makeApiClient(CoreV1Api);
  });

  afterEach(async () => {
    await server.stop();
  });

  async function failureOf(call: Promise<unknown>): Promise<{ code?: unknown; cause?: unknown }> {
    try {
      await call;
    } catch (error) {
      const e = error as { code?: unknown; cause?: { code?: unknown } };
      return { code: e.code, cause: e.cause?.code };
    }
    throw new Error('the call succeeded');
  }

  it('refuses connections while unreachable, then answers again on the same address', async () => {
    await core.listNamespace();
    const url = server.url;

    await server.setUnreachable('refused');
    const refused = await failureOf(core.listNamespace());
    expect([refused.code, refused.cause]).toContain('ECONNREFUSED');

    await server.setUnreachable(undefined);
    expect(server.url).toBe(url);
    const list = await core.listNamespace();
    expect(Array.isArray(list.items)).toBe(true);
  });

  it('answers 503 ServiceUnavailable to every caller in 503 mode', async () => {
    await server.setUnreachable('503');
    expect(await failureOf(core.listNamespace())).toMatchObject({ code: 503 });
    const anonymous = await fetch(`${server.httpUrl}/version`);
    expect(anonymous.status).toBe(503);
    expect(await anonymous.json()).toMatchObject({ reason: 'ServiceUnavailable', code: 503 });

    await server.setUnreachable(undefined);
    expect((await core.listNamespace()).items).toBeDefined();
  });
});

describe('scenario outcome: a runner-medic invocation that threw', () => {
  it('fails the scenario even when every expectation is met', () => {
    const scenario = parseScenario(base);
    const input = {
      scenario,
      remediation: true,
      start: 0,
      end: 1000,
      runs: [],
      runners: [],
      githubAudit: [],
      kubeAudit: [],
      faults: [],
      remediations: [],
      rerunBudget: 2,
    };
    expect(buildOutcome({ ...input, errors: [] }).passed).toBe(true);
    const failed = buildOutcome({ ...input, errors: ['remediate at 5000: connect ECONNREFUSED'] });
    expect(failed.passed).toBe(false);
    expect(failed.errors).toEqual(['remediate at 5000: connect ECONNREFUSED']);
  });
});

describe('scenario outcome: a runner-medic request RBAC refused', () => {
  it('is a violation, reads included', () => {
    const outcome = buildOutcome({
      scenario: parseScenario(base),
      remediation: true,
      start: 0,
      end: 1000,
      runs: [],
      runners: [],
      githubAudit: [],
      kubeAudit: [],
      kubeRequests: [
        {
          cluster: 'c1',
          entries: [
            {
              at: 5,
              by: 'runner-medic',
              method: 'GET',
              path: '/api/v1/pods',
              verb: 'list',
              code: 403,
            },
            {
              at: 6,
              by: 'runner-medic',
              method: 'GET',
              path: '/api/v1/namespaces/arc-runners/pods',
              verb: 'list',
              code: 200,
            },
            { at: 7, by: 'user', method: 'GET', path: '/api/v1/nodes', verb: 'list', code: 403 },
          ],
        },
      ],
      faults: [],
      remediations: [],
      errors: [],
      rerunBudget: 2,
    });
    expect(outcome.medicForbidden).toEqual(['c1 GET /api/v1/pods']);
    expect(outcome.violations).toEqual(['runner-medic refused by RBAC (403): c1 GET /api/v1/pods']);
    expect(outcome.passed).toBe(false);
  });
});
