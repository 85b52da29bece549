/**
 * Every scenario cluster runs as production does unless the scenario says otherwise: the shipped
 * RBAC, the shipped exporter config, ARC's patch-ID gate, and GitHub's measured timings.
 */
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { SimClock } from '../../../sim/clock.js';
import { GitHubSim } from '../../../sim/github/github-sim.js';
import type { ClusterTwin } from '../../../sandbox/scenario/cluster-twin.js';
import { createKubeClusterTwin } from '../../../sandbox/scenario/kube-cluster-twin.js';
import { START } from '../../../sandbox/scenario/run-scenario.js';
import {
  parseScenario,
  SHIPPED_RBAC_MANIFESTS,
} from '../../../sandbox/scenario/scenario-schema.js';

const minimal = parseScenario(`
name: tiny
clusters:
  - name: c1
    arcVersion: '0.13'
    nodes: [{ name: n1, instanceId: i-0abc }]
    scaleSets: [{ name: arc, namespace: ci-runners, owner: acme }]
repos:
  - name: acme/app
    workflows: [{ name: ci, jobs: [{ name: build, runsOn: arc }] }]
runs: [{ at: 0, repo: acme/app, workflow: ci }]
`);

describe('scenario defaults are the faithful ones', () => {
  it('RBAC with the shipped grants, GitHub with the measured timings', () => {
    expect(minimal.clusters[0]?.rbac.manifests).toEqual([...SHIPPED_RBAC_MANIFESTS]);
    expect(minimal.github).toMatchObject({
      lockTtlSeconds: 576,
      gracefulStopConcludeSeconds: 20,
      forceCancelConcludeSeconds: 1,
    });
  });

  describe('a scenario cluster, driven by @kubernetes/client-node as runner-medic', () => {
    const clock = new SimClock(START);
    const github = new GitHubSim({ clock });
    let twin: ClusterTwin;
    let core: CoreV1Api;

    beforeAll(async () => {
      await github.start();
      const spec = minimal.clusters[0];
      if (!spec) throw new Error('no cluster');
      twin = await createKubeClusterTwin({
        spec,
        clock,
        seed: 1,
        github,
        eventDrop: 0,
        kubeServerErrors: 0,
        start: START,
        runnerDeprecation: undefined,
      });
      const kc = new KubeConfig();
      kc.loadFromString(twin.kubeconfig('runner-medic'));
      core = kc.makeApiClient(CoreV1Api);
    });

    afterAll(async () => {
      await twin.stop();
      await github.stop();
    });

    it('lets runner-medic list pods in the runner namespace only: elsewhere EKS answers 403', async () => {
      const listed = await core.listNamespacedPod({ namespace: 'ci-runners' });
      expect(Array.isArray(listed.items)).toBe(true);

      const denied = await core.listPodForAllNamespaces().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(denied).toBeInstanceOf(ApiException);
      expect((denied as ApiException<string>).code).toBe(403);
      expect(String((denied as ApiException<string>).body)).toContain(
        'cannot list resource \\"pods\\" in API group \\"\\" at the cluster scope',
      );
      const create = await core
        .createNamespacedPod({
          namespace: 'ci-runners',
          body: {
            metadata: { name: 'x' },
            spec: { containers: [{ name: 'x', image: 'x' }] },
          },
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect((create as ApiException<string>).code).toBe(403);
    });
  });
});
