/**
 * The API server twin through @kubernetes/client-node: authentication and audit, create/get/list
 * with selectors, Status errors, CRD validation, and kubectl over the kubeconfig.
 */
import { type V1Pod } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ERS, NS, erBody, expectApiError, useApiServer } from './api-server-fixture.js';
import { kubectlPath, minimalPod } from './helpers.js';

describe('Kubernetes API server twin: CRUD and validation', () => {
  const twin = useApiServer();

  it('answers 401 with a Status body without a bearer token, and records the caller of each mutation', async () => {
    const res = await fetch(`${twin.server.httpUrl}/api/v1/namespaces/${NS}/pods`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });

    await twin.core.createNamespacedPod({ namespace: NS, body: minimalPod('p1') as V1Pod });
    const entry = twin.server.audit.entries.find((e) => e.verb === 'create' && e.name === 'p1');
    expect(entry).toMatchObject({
      by: 'runner-medic',
      api: 'kubernetes',
      resource: 'pods',
      namespace: NS,
      labels: { app: 'demo' },
      code: 201,
      at: twin.clock.now(),
    });
  });

  it('creates, gets and lists with label and field selectors; 404 and 409 carry Status bodies', async () => {
    await twin.core.createNamespacedPod({ namespace: NS, body: minimalPod('a') as V1Pod });
    await twin.core.createNamespacedPod({
      namespace: NS,
      body: minimalPod('b', { metadata: { name: 'b', labels: { app: 'other' } } }) as V1Pod,
    });
    twin.server.api.modify(
      'scheduler',
      'pods',
      NS,
      'b',
      (p) => void ((p.spec as { nodeName?: string }).nodeName = 'node-1'),
    );

    const got = await twin.core.readNamespacedPod({ namespace: NS, name: 'a' });
    expect(got.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.status?.phase).toBe('Pending');

    const byLabel = await twin.core.listNamespacedPod({
      namespace: NS,
      labelSelector: 'app in (demo),!missing',
    });
    expect(byLabel.items.map((p) => p.metadata?.name)).toEqual(['a']);
    const byField = await twin.core.listPodForAllNamespaces({
      fieldSelector: 'spec.nodeName=node-1,status.phase=Pending',
    });
    expect(byField.items.map((p) => p.metadata?.name)).toEqual(['b']);
    const unbound = await twin.core.listNamespacedPod({
      namespace: NS,
      fieldSelector: 'spec.nodeName=',
    });
    expect(unbound.items.map((p) => p.metadata?.name)).toEqual(['a']);

    const nf = await expectApiError(
      twin.core.readNamespacedPod({ namespace: NS, name: 'nope' }),
      404,
    );
    expect(nf).toMatchObject({
      reason: 'NotFound',
      message: 'pods "nope" not found',
      details: { name: 'nope', kind: 'pods' },
    });
    const dup = await expectApiError(
      twin.core.createNamespacedPod({ namespace: NS, body: minimalPod('a') as V1Pod }),
      409,
    );
    expect(dup.reason).toBe('AlreadyExists');
    await expectApiError(
      twin.core.createNamespacedPod({ namespace: 'missing', body: minimalPod('x') as V1Pod }),
      404,
    );
  });

  it.each([
    'app in (demo',
    'app=(x)',
    '=value',
    'a b',
    'app notin ()',
    'app=' + 'x'.repeat(64),
    'Bad_Prefix.example/x=y',
    'x > y',
    'app==a==b',
    '!',
  ])('rejects the hostile label selector %j with 400 BadRequest', async (selector) => {
    const body = await expectApiError(
      twin.core.listNamespacedPod({ namespace: NS, labelSelector: selector }),
      400,
    );
    expect(body.reason).toBe('BadRequest');
  });

  it('rejects field selectors the resource does not support', async () => {
    const body = await expectApiError(
      twin.core.listNamespacedPod({ namespace: NS, fieldSelector: 'spec.containers=x' }),
      400,
    );
    expect(body.message).toBe('field label not supported: spec.containers');
    await expectApiError(
      twin.custom.listNamespacedCustomObject({
        ...ERS,
        fieldSelector: 'status.phase=Failed',
      }),
      400,
    );
  });

  it('validates custom objects against the real CRD schema (422 with causes) and prunes unknown fields', async () => {
    const bad = erBody('bad');
    (bad.spec as Record<string, unknown>).runnerScaleSetId = 'one';
    delete (bad.spec as Record<string, unknown>).githubConfigUrl;
    const body = await expectApiError(
      twin.custom.createNamespacedCustomObject({
        ...ERS,
        body: bad,
      }),
      422,
    );
    expect(body.reason).toBe('Invalid');
    expect(body.details?.causes?.map((c) => c.field).sort()).toEqual([
      'spec.githubConfigUrl',
      'spec.runnerScaleSetId',
    ]);

    const extra = erBody('extra');
    (extra.spec as Record<string, unknown>).notInSchema = true;
    const created = (await twin.custom.createNamespacedCustomObject({
      ...ERS,
      body: extra,
    })) as { spec: Record<string, unknown> };
    expect(created.spec.notInSchema).toBeUndefined();
    const ers = await twin.custom.listClusterCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      plural: 'ephemeralrunners',
    });
    expect((ers as { items: unknown[] }).items).toHaveLength(1);
  });

  it('serves kubectl through the kubeconfig (kubectl get ephemeralrunners -A)', async () => {
    const kubectl = kubectlPath();
    if (!kubectl) return; // kubectl is optional on developer machines
    twin.server.api.create(
      'arc',
      'ephemeralrunners',
      NS,
      erBody('arc-runner-set-abcde-runner-xyz12'),
    );
    twin.server.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      'arc-runner-set-abcde-runner-xyz12',
      (er) => void (er.status = { phase: 'Failed', reason: 'InvalidPod', runnerId: 42 }),
      { subresource: 'status' },
    );
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    const file = join(dir, 'config');
    writeFileSync(file, twin.server.kubeconfig('user'));
    // Asynchronous: the server runs in this process, so a blocking exec would starve it.
    const { stdout: out } = await promisify(execFile)(
      kubectl,
      ['--kubeconfig', file, 'get', 'ephemeralrunners', '-A', '--request-timeout=20s'],
      { encoding: 'utf8', env: { ...process.env, HOME: dir, KUBECACHEDIR: join(dir, 'cache') } },
    );
    expect(out).toMatch(/^NAMESPACE\s+NAME\s+GITHUB CONFIG URL\s+RUNNERID\s+PHASE/m);
    expect(out).toMatch(
      /arc-runners\s+arc-runner-set-abcde-runner-xyz12\s+https:\/\/github.com\/acme\s+42\s+Failed/,
    );
  });
});
