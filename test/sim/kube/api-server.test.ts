import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Pod,
} from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimClock } from '../../../sim/clock.js';
import { Rng } from '../../../sim/rng.js';
import { ApiServer } from '../../../sim/kube/api/api-server.js';
import { eventually, kubectlPath, minimalPod } from './helpers.js';

const NS = 'arc-runners';

function erBody(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/component': 'runner' } },
    spec: {
      githubConfigUrl: 'https://github.com/acme',
      githubConfigSecret: 'github-config',
      runnerScaleSetId: 1,
      spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    },
    ...extra,
  };
}

async function expectApiError(
  p: Promise<unknown>,
  code: number,
): Promise<{ reason?: string; message?: string; details?: { causes?: { field?: string }[] } }> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiException);
    const err = e as ApiException<unknown>;
    expect(err.code).toBe(code);
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
    return body;
  }
  throw new Error(`expected HTTP ${code}`);
}

describe('Kubernetes API server twin, driven by @kubernetes/client-node', () => {
  let clock: SimClock;
  let server: ApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;

  beforeEach(async () => {
    clock = new SimClock();
    server = new ApiServer({
      clock,
      rng: new Rng(7),
      clusterName: 'sim',
      schemaFlavour: '0.13',
      bookmarkIntervalMs: 50,
    });
    await server.start();
    server.api.create('admin', 'namespaces', undefined, { metadata: { name: NS } });
    kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig('runner-medic'));
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
  });

  afterEach(async () => {
    await server.stop();
  });

  it('answers 401 with a Status body without a bearer token, and records the caller of each mutation', async () => {
    const res = await fetch(`${server.httpUrl}/api/v1/namespaces/${NS}/pods`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });

    await core.createNamespacedPod({ namespace: NS, body: minimalPod('p1') as V1Pod });
    const entry = server.audit.entries.find((e) => e.verb === 'create' && e.name === 'p1');
    expect(entry).toMatchObject({
      by: 'runner-medic',
      api: 'kubernetes',
      resource: 'pods',
      namespace: NS,
      labels: { app: 'demo' },
      code: 201,
      at: clock.now(),
    });
  });

  it('creates, gets and lists with label and field selectors; 404 and 409 carry Status bodies', async () => {
    await core.createNamespacedPod({ namespace: NS, body: minimalPod('a') as V1Pod });
    await core.createNamespacedPod({
      namespace: NS,
      body: minimalPod('b', { metadata: { name: 'b', labels: { app: 'other' } } }) as V1Pod,
    });
    server.api.modify(
      'scheduler',
      'pods',
      NS,
      'b',
      (p) => void ((p.spec as { nodeName?: string }).nodeName = 'node-1'),
    );

    const got = await core.readNamespacedPod({ namespace: NS, name: 'a' });
    expect(got.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.status?.phase).toBe('Pending');

    const byLabel = await core.listNamespacedPod({
      namespace: NS,
      labelSelector: 'app in (demo),!missing',
    });
    expect(byLabel.items.map((p) => p.metadata?.name)).toEqual(['a']);
    const byField = await core.listPodForAllNamespaces({
      fieldSelector: 'spec.nodeName=node-1,status.phase=Pending',
    });
    expect(byField.items.map((p) => p.metadata?.name)).toEqual(['b']);
    const unbound = await core.listNamespacedPod({
      namespace: NS,
      fieldSelector: 'spec.nodeName=',
    });
    expect(unbound.items.map((p) => p.metadata?.name)).toEqual(['a']);

    const nf = await expectApiError(core.readNamespacedPod({ namespace: NS, name: 'nope' }), 404);
    expect(nf).toMatchObject({
      reason: 'NotFound',
      message: 'pods "nope" not found',
      details: { name: 'nope', kind: 'pods' },
    });
    const dup = await expectApiError(
      core.createNamespacedPod({ namespace: NS, body: minimalPod('a') as V1Pod }),
      409,
    );
    expect(dup.reason).toBe('AlreadyExists');
    await expectApiError(
      core.createNamespacedPod({ namespace: 'missing', body: minimalPod('x') as V1Pod }),
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
      core.listNamespacedPod({ namespace: NS, labelSelector: selector }),
      400,
    );
    expect(body.reason).toBe('BadRequest');
  });

  it('rejects field selectors the resource does not support', async () => {
    const body = await expectApiError(
      core.listNamespacedPod({ namespace: NS, fieldSelector: 'spec.containers=x' }),
      400,
    );
    expect(body.message).toBe('field label not supported: spec.containers');
    await expectApiError(
      custom.listNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        fieldSelector: 'status.phase=Failed',
      }),
      400,
    );
  });

  it('paginates 5,000 objects with limit and continue', async () => {
    for (let i = 0; i < 5000; i++)
      server.api.create('scenario', 'pods', NS, minimalPod(`pod-${String(i).padStart(4, '0')}`));
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedPod({ namespace: NS, limit: 700, _continue: token });
      pages++;
      names.push(...page.items.map((p) => p.metadata?.name as string));
      if (page.metadata?._continue)
        expect(page.metadata.remainingItemCount).toBe(5000 - names.length);
      token = page.metadata?._continue;
    } while (token);
    expect(pages).toBe(8);
    expect(new Set(names).size).toBe(5000);
    await expectApiError(
      core.listNamespacedPod({ namespace: NS, limit: 10, _continue: 'garbage!' }),
      400,
    );
  });

  it('feeds an informer (list + watch) and recovers from 410 Gone by re-listing', async () => {
    const path = `/api/v1/namespaces/${NS}/pods`;
    const informer = makeInformer<V1Pod>(kc, path, () => core.listNamespacedPod({ namespace: NS }));
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add:${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update:${p.metadata?.name}:${p.status?.phase}`));
    informer.on('delete', (p) => seen.push(`delete:${p.metadata?.name}`));
    server.api.create('scenario', 'pods', NS, minimalPod('before'));
    await informer.start();
    try {
      await eventually(() => seen.includes('add:before'));
      server.api.create('scenario', 'pods', NS, minimalPod('during'));
      server.api.modify(
        'kubelet',
        'pods',
        NS,
        'during',
        (p) => void ((p.status as { phase: string }).phase = 'Running'),
        { subresource: 'status' },
      );
      server.api.delete('scenario', 'pods', NS, 'before');
      await eventually(
        () => seen.includes('delete:before') && seen.includes('update:during:Running'),
      );

      // Expire the history and cut the stream: the resumed watch gets 410 and the informer re-lists.
      const listsBefore = server.audit.requests.filter((r) => r.verb === 'list').length;
      server.closeWatches();
      server.api.create('scenario', 'pods', NS, minimalPod('after-gone'));
      server.store.compact();
      await eventually(() => informer.get('after-gone', NS), 10_000);
      expect(server.audit.requests.filter((r) => r.verb === 'list').length).toBeGreaterThan(
        listsBefore,
      );
      expect(
        informer
          .list(NS)
          .map((p) => p.metadata?.name)
          .sort(),
      ).toEqual(['after-gone', 'during']);
    } finally {
      await informer.stop();
    }
  });

  it('sends bookmarks when asked and 410 Gone for a compacted resourceVersion', async () => {
    const watch = new Watch(kc);
    const events: { type: string; rv?: string; code?: number }[] = [];
    const req = await watch.watch(
      `/api/v1/namespaces/${NS}/pods`,
      { allowWatchBookmarks: true },
      (type, obj: { metadata?: { resourceVersion?: string }; code?: number }) =>
        events.push({ type, rv: obj.metadata?.resourceVersion, code: obj.code }),
      () => undefined,
    );
    await eventually(() => events.some((e) => e.type === 'BOOKMARK'));
    req.abort();

    server.api.create('scenario', 'pods', NS, minimalPod('x'));
    const oldRv = server.store.currentRv() - 1;
    server.store.compact();
    const gone: { type: string; code?: number }[] = [];
    let done = false;
    await watch.watch(
      `/api/v1/namespaces/${NS}/pods`,
      { resourceVersion: String(oldRv) },
      (type, obj: { code?: number }) => gone.push({ type, code: obj.code }),
      () => (done = true),
    );
    await eventually(() => done);
    expect(gone).toEqual([{ type: 'ERROR', code: 410 }]);
  });

  it('patches status by merge, JSON and strategic merge patch, with optimistic concurrency on update', async () => {
    await core.createNamespacedPod({ namespace: NS, body: minimalPod('p') as V1Pod });
    await core.patchNamespacedPodStatus(
      {
        namespace: NS,
        name: 'p',
        body: {
          status: {
            phase: 'Running',
            conditions: [
              { type: 'Ready', status: 'False' },
              { type: 'PodScheduled', status: 'True' },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.patchNamespacedPodStatus(
      {
        namespace: NS,
        name: 'p',
        body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    let pod = await core.readNamespacedPodStatus({ namespace: NS, name: 'p' });
    expect(pod.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=True',
      'PodScheduled=True',
    ]);

    await core.patchNamespacedPod(
      {
        namespace: NS,
        name: 'p',
        body: [{ op: 'add', path: '/metadata/labels/extra', value: 'yes' }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await expectApiError(
      core.patchNamespacedPod(
        {
          namespace: NS,
          name: 'p',
          body: [{ op: 'test', path: '/metadata/labels/extra', value: 'no' }],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ),
      422,
    );
    // The main resource ignores status; the status subresource ignores everything else.
    await core.patchNamespacedPod(
      { namespace: NS, name: 'p', body: { status: { phase: 'Failed' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    pod = await core.readNamespacedPod({ namespace: NS, name: 'p' });
    expect(pod.status?.phase).toBe('Running');
    expect(pod.metadata?.labels).toEqual({ app: 'demo', extra: 'yes' });

    const stale = { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } };
    const conflict = await expectApiError(
      core.replaceNamespacedPod({ namespace: NS, name: 'p', body: stale }),
      409,
    );
    expect(conflict.message).toContain('the object has been modified');
  });

  it('holds deletion on finalizers with deletionTimestamp, and honours delete preconditions', async () => {
    await custom.createNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      body: erBody('er-1', {
        metadata: {
          name: 'er-1',
          namespace: NS,
          finalizers: ['ephemeralrunner.actions.github.com/finalizer'],
        },
      }),
    });
    const er = (await custom.getNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'er-1',
    })) as { metadata: { uid: string } };

    const pre = await expectApiError(
      custom.deleteNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: 'er-1',
        body: { preconditions: { uid: 'not-the-uid' } },
      }),
      409,
    );
    expect(pre.message).toContain('Precondition failed: UID in precondition: not-the-uid');

    await custom.deleteNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'er-1',
      body: { preconditions: { uid: er.metadata.uid } },
    });
    const held = (await custom.getNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'er-1',
    })) as { metadata: { deletionTimestamp?: string; finalizers?: string[] } };
    expect(held.metadata.deletionTimestamp).toBeDefined();
    await expectApiError(
      custom.patchNamespacedCustomObject(
        {
          group: 'actions.github.com',
          version: 'v1alpha1',
          namespace: NS,
          plural: 'ephemeralrunners',
          name: 'er-1',
          body: {
            metadata: { finalizers: ['ephemeralrunner.actions.github.com/finalizer', 'new/one'] },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      422,
    );
    await custom.patchNamespacedCustomObject(
      {
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: 'er-1',
        body: { metadata: { finalizers: null } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await expectApiError(
      custom.getNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: 'er-1',
      }),
      404,
    );
  });

  it('garbage-collects dependents through ownerReferences', async () => {
    const er = server.api.create('arc', 'ephemeralrunners', NS, erBody('owner'));
    server.api.create(
      'arc',
      'pods',
      NS,
      minimalPod('owner', {
        metadata: {
          name: 'owner',
          ownerReferences: [
            {
              apiVersion: 'actions.github.com/v1alpha1',
              kind: 'EphemeralRunner',
              name: 'owner',
              uid: er.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
      }),
    );
    server.api.create(
      'arc',
      'pods',
      NS,
      minimalPod('orphan-me', {
        metadata: {
          name: 'orphan-me',
          ownerReferences: [
            {
              apiVersion: 'actions.github.com/v1alpha1',
              kind: 'EphemeralRunner',
              name: 'owner',
              uid: er.metadata.uid,
            },
          ],
        },
      }),
    );
    server.api.modify('x', 'pods', NS, 'orphan-me', (p) => void (p.metadata.ownerReferences = []));
    await custom.deleteNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'owner',
    });
    await expectApiError(core.readNamespacedPod({ namespace: NS, name: 'owner' }), 404);
    expect(
      (await core.readNamespacedPod({ namespace: NS, name: 'orphan-me' })).metadata?.name,
    ).toBe('orphan-me');
    expect(
      server.audit.entries.find((e) => e.by === 'garbage-collector' && e.verb === 'delete'),
    ).toMatchObject({ resource: 'pods', name: 'owner' });
  });

  it('validates custom objects against the real CRD schema (422 with causes) and prunes unknown fields', async () => {
    const bad = erBody('bad');
    (bad.spec as Record<string, unknown>).runnerScaleSetId = 'one';
    delete (bad.spec as Record<string, unknown>).githubConfigUrl;
    const body = await expectApiError(
      custom.createNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
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
    const created = (await custom.createNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      body: extra,
    })) as { spec: Record<string, unknown> };
    expect(created.spec.notInSchema).toBeUndefined();
    const ers = await custom.listClusterCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      plural: 'ephemeralrunners',
    });
    expect((ers as { items: unknown[] }).items).toHaveLength(1);
  });

  it('evicts a pod through policy/v1, which sets DisruptionTarget and deletes gracefully', async () => {
    server.api.create('arc', 'pods', NS, minimalPod('victim'));
    server.api.modify(
      'scheduler',
      'pods',
      NS,
      'victim',
      (p) => void ((p.spec as { nodeName?: string }).nodeName = 'node-1'),
    );
    await core.createNamespacedPodEviction({
      namespace: NS,
      name: 'victim',
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'victim', namespace: NS },
      },
    });
    const pod = await core.readNamespacedPod({ namespace: NS, name: 'victim' });
    expect(pod.metadata?.deletionTimestamp).toBeDefined();
    expect(pod.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    expect(server.audit.entries.filter((e) => e.by === 'runner-medic').map((e) => e.verb)).toEqual([
      'evict',
    ]);
  });

  it('serves kubectl through the kubeconfig (kubectl get ephemeralrunners -A)', async () => {
    const kubectl = kubectlPath();
    if (!kubectl) return; // kubectl is optional on developer machines
    server.api.create('arc', 'ephemeralrunners', NS, erBody('arc-runner-set-abcde-runner-xyz12'));
    server.api.modify(
      'arc',
      'ephemeralrunners',
      NS,
      'arc-runner-set-abcde-runner-xyz12',
      (er) => void (er.status = { phase: 'Failed', reason: 'InvalidPod', runnerId: 42 }),
      { subresource: 'status' },
    );
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    const file = join(dir, 'config');
    writeFileSync(file, server.kubeconfig('user'));
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

describe('API server edge cases', () => {
  let server: ApiServer;
  let token: string;
  beforeEach(async () => {
    server = new ApiServer({
      clock: new SimClock(),
      rng: new Rng(1),
      clusterName: 'sim',
      schemaFlavour: '0.13',
    });
    await server.start();
    server.api.create('admin', 'namespaces', undefined, { metadata: { name: NS } });
    token = server.token('runner-medic');
  });
  afterEach(() => server.stop());

  const call = async (
    method: string,
    path: string,
    body?: string,
    contentType = 'application/json',
  ) => {
    const res = await fetch(`${server.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body,
    });
    return {
      status: res.status,
      body: (await res.json()) as { kind?: string; reason?: string; code?: number },
    };
  };

  it.each([
    ['POST', `/api/v1/namespaces/${NS}/pods`, '{not json', 'application/json', 400, 'BadRequest'],
    [
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/x`,
      '{}',
      'application/json',
      415,
      'UnsupportedMediaType',
    ],
    ['GET', '/api/v1/namespaces/x/widgets', undefined, 'application/json', 404, 'NotFound'],
    ['POST', `/api/v1/namespaces/${NS}/pods/x`, '{}', 'application/json', 405, 'MethodNotAllowed'],
    ['GET', `/api/v1/namespaces/${NS}/pods/x/log`, undefined, 'application/json', 404, 'NotFound'],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ apiVersion: 'v2', kind: 'Pod', metadata: { name: 'x' } }),
      'application/json',
      400,
      'BadRequest',
    ],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } }),
      'application/json',
      422,
      'Invalid',
    ],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({
        metadata: { name: 'x', labels: { 'bad key!': 'v' } },
        spec: { containers: [{ name: 'c' }] },
      }),
      'application/json',
      422,
      'Invalid',
    ],
    [
      'GET',
      `/api/v1/namespaces/${NS}/pods?limit=5&continue=%00%01`,
      undefined,
      'application/json',
      400,
      'BadRequest',
    ],
    [
      'DELETE',
      `/api/v1/namespaces/${NS}/pods/x?propagationPolicy=Sideways`,
      undefined,
      'application/json',
      400,
      'BadRequest',
    ],
  ])('%s %s → %i', async (method, path, body, contentType, status, reason) => {
    const res = await call(method, path, body, contentType);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ kind: 'Status', reason, code: status });
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const res = await call(
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ metadata: { name: 'big', annotations: { a: 'x'.repeat(3_200_000) } } }),
    );
    expect(res.status).toBe(413);
  });

  it('orphans or foreground-deletes dependents by propagationPolicy', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(server.kubeconfig());
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const owner = (name: string) => {
      const er = server.api.create('arc', 'ephemeralrunners', NS, erBody(name));
      const ref = {
        apiVersion: 'actions.github.com/v1alpha1',
        kind: 'EphemeralRunner',
        name,
        uid: er.metadata.uid as string,
        controller: true,
        blockOwnerDeletion: true,
      };
      server.api.create(
        'arc',
        'pods',
        NS,
        minimalPod(name, {
          metadata: { name, ownerReferences: [ref], finalizers: ['example.com/hold'] },
        }),
      );
    };
    owner('orphaner');
    await custom.deleteNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'orphaner',
      propagationPolicy: 'Orphan',
    });
    await expectApiError(
      custom.getNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: 'orphaner',
      }),
      404,
    );
    const orphan = await core.readNamespacedPod({ namespace: NS, name: 'orphaner' });
    expect(orphan.metadata?.ownerReferences).toBeUndefined();
    expect(orphan.metadata?.deletionTimestamp).toBeUndefined();

    owner('fg');
    await custom.deleteNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'fg',
      propagationPolicy: 'Foreground',
    });
    const waiting = (await custom.getNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
      name: 'fg',
    })) as { metadata: { finalizers: string[] } };
    expect(waiting.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(
      (await core.readNamespacedPod({ namespace: NS, name: 'fg' })).metadata?.deletionTimestamp,
    ).toBeDefined();
    // The dependent's own finalizer holds it; releasing it lets the owner go.
    await core.patchNamespacedPod(
      { namespace: NS, name: 'fg', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await expectApiError(core.readNamespacedPod({ namespace: NS, name: 'fg' }), 404);
    await expectApiError(
      custom.getNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunners',
        name: 'fg',
      }),
      404,
    );
  });

  it('honours dryRun=All without persisting or counting as a change', async () => {
    const res = await call(
      'POST',
      `/api/v1/namespaces/${NS}/pods?dryRun=All`,
      JSON.stringify(minimalPod('dry')),
    );
    expect(res.status).toBe(201);
    expect(server.api.tryGet('pods', NS, 'dry')).toBeUndefined();
    expect(server.audit.entries.at(-1)).toMatchObject({
      verb: 'create',
      name: 'dry',
      detail: 'dryRun',
    });
  });
});

describe('watch selection transitions', () => {
  it('sends ADDED when an object starts matching the selector and DELETED when it stops', async () => {
    const server = new ApiServer({
      clock: new SimClock(),
      rng: new Rng(2),
      clusterName: 'sim',
      schemaFlavour: '0.13',
    });
    await server.start();
    try {
      server.api.create('admin', 'namespaces', undefined, { metadata: { name: NS } });
      server.api.create(
        'scenario',
        'pods',
        NS,
        minimalPod('p', { metadata: { name: 'p', labels: { role: 'idle' } } }),
      );
      const kc = new KubeConfig();
      kc.loadFromString(server.kubeconfig());
      const seen: string[] = [];
      const req = await new Watch(kc).watch(
        `/api/v1/namespaces/${NS}/pods`,
        { labelSelector: 'role=busy', resourceVersion: String(server.store.currentRv()) },
        (type, obj: { metadata: { labels: Record<string, string> } }) =>
          seen.push(`${type}:${obj.metadata.labels.role}`),
        () => undefined,
      );
      await new Promise((r) => setTimeout(r, 50));
      server.api.modify(
        'scenario',
        'pods',
        NS,
        'p',
        (o) => void (o.metadata.labels = { role: 'busy' }),
      );
      server.api.modify(
        'scenario',
        'pods',
        NS,
        'p',
        (o) => void (o.metadata.labels = { role: 'busy', extra: 'x' }),
      );
      server.api.modify(
        'scenario',
        'pods',
        NS,
        'p',
        (o) => void (o.metadata.labels = { role: 'idle' }),
      );
      server.api.create(
        'scenario',
        'pods',
        NS,
        minimalPod('q', { metadata: { name: 'q', labels: { role: 'busy' } } }),
      );
      server.api.delete('scenario', 'pods', NS, 'q');
      await eventually(() => seen.length >= 5);
      req.abort();
      expect(seen).toEqual([
        'ADDED:busy',
        'MODIFIED:busy',
        'DELETED:idle',
        'ADDED:busy',
        'DELETED:busy',
      ]);
    } finally {
      await server.stop();
    }
  });
});
