/**
 * What the API server twin serves for `kubectl apply` with kubectl's defaults: OpenAPI v3
 * discovery (sim/kube/api/openapi.ts), `fieldValidation=Strict` (field-validation.ts), and a
 * Secret's write-only stringData (defaults.ts). kubectl itself against the twin:
 * test/infra/in-cluster-apply.test.ts.
 */
import { AppsV1Api } from '@kubernetes/client-node';
import { ERS, NS, erBody, expectApiError, useApiServer } from './api-server-fixture.js';

const twin = useApiServer();

const deployment = (container: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx', ...container }] },
    },
  },
});

interface PatchOperation {
  parameters?: { name: string }[];
  requestBody?: { content: Record<string, unknown> };
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}

test('OpenAPI v3: a document per group-version, whose PATCH operations take fieldValidation', async () => {
  const root = (await twin.call('GET', '/openapi/v3')).body as unknown as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  expect(Object.keys(root.paths)).toEqual(
    expect.arrayContaining([
      'api/v1',
      'apis/apps/v1',
      'apis/policy/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/actions.github.com/v1alpha1',
    ]),
  );
  const patchOf = async (groupVersion: string, path: string) => {
    const url = root.paths[groupVersion]?.serverRelativeURL as string;
    expect(url).toMatch(new RegExp(`^/openapi/v3/${groupVersion}\\?hash=[0-9A-F]{128}$`));
    const doc = (await twin.call('GET', url)).body as unknown as {
      paths: Record<string, { patch?: PatchOperation }>;
    };
    return doc.paths[path]?.patch as PatchOperation;
  };

  const deployments = await patchOf(
    'apis/apps/v1',
    '/apis/apps/v1/namespaces/{namespace}/deployments/{name}',
  );
  expect(deployments['x-kubernetes-group-version-kind']).toEqual({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
  });
  expect(deployments.parameters?.map((p) => p.name)).toContain('fieldValidation');
  expect(Object.keys(deployments.requestBody?.content ?? {})).toContain(
    'application/strategic-merge-patch+json',
  );
  // A custom resource takes no strategic merge patch, so kubectl sends a JSON merge patch.
  const runners = await patchOf(
    'apis/actions.github.com/v1alpha1',
    '/apis/actions.github.com/v1alpha1/namespaces/{namespace}/ephemeralrunners/{name}',
  );
  expect(Object.keys(runners.requestBody?.content ?? {})).toEqual([
    'application/json-patch+json',
    'application/merge-patch+json',
  ]);
  expect((await twin.call('GET', '/openapi/v3/apis/nothing.example.com/v1')).status).toBe(404);
});

test('fieldValidation=Strict: a create with an unknown field is a 400 that names it', async () => {
  const path = `/apis/apps/v1/namespaces/${NS}/deployments`;
  const typo = JSON.stringify(deployment({ imagePullPolice: 'Always' }));
  const refused = await twin.call('POST', `${path}?fieldValidation=Strict`, typo);
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({
    reason: 'BadRequest',
    message:
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' +
      'unknown field "spec.template.spec.containers[0].imagePullPolice"',
  });
  expect(twin.server.api.tryGet('deployments', NS, 'web')).toBeUndefined();

  // Known fields pass, through the real client with its own fieldValidation parameter.
  const apps = twin.kc.makeApiClient(AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: NS,
    body: deployment({ imagePullPolicy: 'Always' }),
    fieldValidation: 'Strict',
  });
  expect(twin.server.api.tryGet('deployments', NS, 'web')).toBeDefined();

  // An unknown directive fails the request's options; a read ignores the parameter.
  const bogus = await twin.call('POST', `${path}?fieldValidation=Loose`, typo);
  expect(bogus.status).toBe(422);
  expect(bogus.body).toMatchObject({ reason: 'Invalid', details: { kind: 'CreateOptions' } });
  expect((await twin.call('GET', `${path}?fieldValidation=Loose`)).status).toBe(200);
});

test('fieldValidation=Strict: a patch whose result has an unknown field is a 422 on `patch`', async () => {
  await twin.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: NS,
    body: deployment(),
  });
  const rv = twin.server.api.get('deployments', NS, 'web').metadata.resourceVersion;
  const refused = await twin.call(
    'PATCH',
    `/apis/apps/v1/namespaces/${NS}/deployments/web?fieldValidation=Strict`,
    JSON.stringify({ spec: { replica: 3 } }),
    'application/merge-patch+json',
  );
  expect(refused.status).toBe(422);
  expect(refused.body).toMatchObject({
    reason: 'Invalid',
    details: {
      causes: [
        {
          field: 'patch',
          message: expect.stringContaining('strict decoding error: unknown field "spec.replica"'),
        },
      ],
    },
  });
  expect(twin.server.api.get('deployments', NS, 'web').metadata.resourceVersion).toBe(rv);
});

test('fieldValidation=Strict on a custom resource: fields its CRD does not declare are refused', async () => {
  const body = erBody('runner-a', {});
  (body.spec as Record<string, unknown>).runnerGroup = 'default';
  await expectApiError(
    twin.custom.createNamespacedCustomObject({ ...ERS, body, fieldValidation: 'Strict' }),
    400,
  );
  // Without it the field is pruned, as a structural schema prunes it.
  await twin.custom.createNamespacedCustomObject({ ...ERS, body });
  expect(twin.server.api.get('ephemeralrunners', NS, 'runner-a').spec).not.toHaveProperty(
    'runnerGroup',
  );
});

test("a Secret's stringData is merged into data on every write and never stored", async () => {
  await twin.core.createNamespacedSecret({
    namespace: NS,
    body: { metadata: { name: 'app' }, data: { kept: 'MQ==' }, stringData: { token: 'abc' } },
  });
  const created = await twin.core.readNamespacedSecret({ namespace: NS, name: 'app' });
  expect(created.data).toEqual({ kept: 'MQ==', token: Buffer.from('abc').toString('base64') });
  expect(created.stringData).toBeUndefined();

  // The same stringData again is no change at all; a new value overwrites data's.
  const same = await twin.call(
    'PATCH',
    `/api/v1/namespaces/${NS}/secrets/app`,
    JSON.stringify({ stringData: { token: 'abc' } }),
    'application/strategic-merge-patch+json',
  );
  expect(same.status).toBe(200);
  const unchanged = await twin.core.readNamespacedSecret({ namespace: NS, name: 'app' });
  expect(unchanged.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  await twin.call(
    'PATCH',
    `/api/v1/namespaces/${NS}/secrets/app`,
    JSON.stringify({ stringData: { kept: 'two' } }),
    'application/strategic-merge-patch+json',
  );
  const changed = await twin.core.readNamespacedSecret({ namespace: NS, name: 'app' });
  expect(changed.data?.kept).toBe(Buffer.from('two').toString('base64'));
  expect(changed.stringData).toBeUndefined();
});
