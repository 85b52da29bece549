/**
 * The twin refuses the Deployments, Services, PersistentVolumeClaims and PodDisruptionBudgets a
 * real API server refuses (sim/kube/api/workload-validation.ts), with 422 Invalid and a cause per
 * field, so that test/infra/in-cluster-apply.test.ts's "every object is accepted" can fail.
 */
import { NS, useApiServer } from './api-server-fixture.js';

const twin = useApiServer();

async function causesOf(path: string, body: unknown): Promise<string[]> {
  const answer = await twin.call('POST', path, JSON.stringify(body));
  expect(answer.status).toBe(422);
  expect(answer.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
  const { details } = answer.body as { details?: { causes?: { field?: string }[] } };
  return (details?.causes ?? []).map((c) => c.field ?? '');
}

const DEPLOYMENTS = `/apis/apps/v1/namespaces/${NS}/deployments`;

function deployment(spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'web', image: 'nginx', ports: [{ name: 'http', containerPort: 80 }] },
          ],
          ...podSpec,
        },
      },
      ...spec,
    },
  };
}

test('a well-formed Deployment is created', async () => {
  expect((await twin.call('POST', DEPLOYMENTS, JSON.stringify(deployment()))).status).toBe(201);
});

test("a Deployment whose selector does not match its template's labels is refused", async () => {
  expect(
    await causesOf(DEPLOYMENTS, deployment({ selector: { matchLabels: { app: 'api' } } })),
  ).toEqual(['spec.template.metadata.labels']);
  expect(await causesOf(DEPLOYMENTS, deployment({ selector: {} }))).toEqual(['spec.selector']);
});

test("a Deployment's pod template: image, port names, volumes and their mounts", async () => {
  const causes = await causesOf(
    DEPLOYMENTS,
    deployment(
      {},
      {
        containers: [
          {
            name: 'web',
            ports: [
              { name: 'a-very-long-port-name', containerPort: 80 },
              { name: 'metrics', containerPort: 0 },
            ],
            volumeMounts: [{ name: 'store', mountPath: '/data' }, { name: 'cache' }],
          },
        ],
        volumes: [
          { name: 'cache', emptyDir: {}, persistentVolumeClaim: { claimName: 'c' } },
          { name: 'x' },
        ],
      },
    ),
  );
  expect(causes.sort()).toEqual(
    [
      'spec.template.spec.volumes[0].persistentVolumeClaim',
      'spec.template.spec.volumes[1]',
      'spec.template.spec.containers[0].image',
      'spec.template.spec.containers[0].ports[0].name',
      'spec.template.spec.containers[0].ports[1].containerPort',
      'spec.template.spec.containers[0].volumeMounts[0].name',
      'spec.template.spec.containers[0].volumeMounts[1].mountPath',
    ].sort(),
  );
});

test('Services, claims and disruption budgets: the fields a real server requires', async () => {
  expect(
    await causesOf(`/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80, targetPort: 'http_port' }, { port: 0 }] },
    }),
  ).toEqual([
    'spec.ports[0].name',
    'spec.ports[0].targetPort',
    'spec.ports[1].port',
    'spec.ports[1].name',
  ]);
  expect(
    await causesOf(`/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      metadata: { name: 'store' },
      spec: { resources: {} },
    }),
  ).toEqual(['spec.accessModes', 'spec.resources[storage]']);
  expect(
    await causesOf(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
      metadata: { name: 'web' },
      spec: { minAvailable: 1, maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
    }),
  ).toEqual(['spec']);
});
