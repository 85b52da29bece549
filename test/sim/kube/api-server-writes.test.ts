/**
 * The API server twin's writes: patch types and the status subresource, optimistic concurrency,
 * finalizers and delete preconditions, garbage collection and propagation policies, eviction and
 * dry runs.
 */
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { ERS, NS, erBody, expectApiError, useApiServer } from './api-server-fixture.js';
import { minimalPod } from './helpers.js';

describe('Kubernetes API server twin: patches, deletion and eviction', () => {
  const twin = useApiServer();

  it('patches status by merge, JSON and strategic merge patch, with optimistic concurrency on update', async () => {
    await twin.core.createNamespacedPod({ namespace: NS, body: minimalPod('p') as V1Pod });
    await twin.core.patchNamespacedPodStatus(
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
    await twin.core.patchNamespacedPodStatus(
      {
        namespace: NS,
        name: 'p',
        body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    let pod = await twin.core.readNamespacedPodStatus({ namespace: NS, name: 'p' });
    expect(pod.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=True',
      'PodScheduled=True',
    ]);

    await twin.core.patchNamespacedPod(
      {
        namespace: NS,
        name: 'p',
        body: [{ op: 'add', path: '/metadata/labels/extra', value: 'yes' }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await expectApiError(
      twin.core.patchNamespacedPod(
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
    await twin.core.patchNamespacedPod(
      { namespace: NS, name: 'p', body: { status: { phase: 'Failed' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    pod = await twin.core.readNamespacedPod({ namespace: NS, name: 'p' });
    expect(pod.status?.phase).toBe('Running');
    expect(pod.metadata?.labels).toEqual({ app: 'demo', extra: 'yes' });

    const stale = { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } };
    const conflict = await expectApiError(
      twin.core.replaceNamespacedPod({ namespace: NS, name: 'p', body: stale }),
      409,
    );
    expect(conflict.message).toContain('the object has been modified');
  });

  it('holds deletion on finalizers with deletionTimestamp, and honours delete preconditions', async () => {
    await twin.custom.createNamespacedCustomObject({
      ...ERS,
      body: erBody('er-1', {
        metadata: {
          name: 'er-1',
          namespace: NS,
          finalizers: ['ephemeralrunner.actions.github.com/finalizer'],
        },
      }),
    });
    const er = (await twin.custom.getNamespacedCustomObject({
      ...ERS,
      name: 'er-1',
    })) as { metadata: { uid: string } };

    const pre = await expectApiError(
      twin.custom.deleteNamespacedCustomObject({
        ...ERS,
        name: 'er-1',
        body: { preconditions: { uid: 'not-the-uid' } },
      }),
      409,
    );
    expect(pre.message).toContain('Precondition failed: UID in precondition: not-the-uid');

    await twin.custom.deleteNamespacedCustomObject({
      ...ERS,
      name: 'er-1',
      body: { preconditions: { uid: er.metadata.uid } },
    });
    const held = (await twin.custom.getNamespacedCustomObject({
      ...ERS,
      name: 'er-1',
    })) as { metadata: { deletionTimestamp?: string; finalizers?: string[] } };
    expect(held.metadata.deletionTimestamp).toBeDefined();
    await expectApiError(
      twin.custom.patchNamespacedCustomObject(
        {
          ...ERS,
          name: 'er-1',
          body: {
            metadata: { finalizers: ['ephemeralrunner.actions.github.com/finalizer', 'new/one'] },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      422,
    );
    await twin.custom.patchNamespacedCustomObject(
      {
        ...ERS,
        name: 'er-1',
        body: { metadata: { finalizers: null } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await expectApiError(
      twin.custom.getNamespacedCustomObject({
        ...ERS,
        name: 'er-1',
      }),
      404,
    );
  });

  it('garbage-collects dependents through ownerReferences', async () => {
    const er = twin.server.api.create('arc', 'ephemeralrunners', NS, erBody('owner'));
    twin.server.api.create(
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
    twin.server.api.create(
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
    twin.server.api.modify(
      'x',
      'pods',
      NS,
      'orphan-me',
      (p) => void (p.metadata.ownerReferences = []),
    );
    await twin.custom.deleteNamespacedCustomObject({
      ...ERS,
      name: 'owner',
    });
    await expectApiError(twin.core.readNamespacedPod({ namespace: NS, name: 'owner' }), 404);
    expect(
      (await twin.core.readNamespacedPod({ namespace: NS, name: 'orphan-me' })).metadata?.name,
    ).toBe('orphan-me');
    expect(
      twin.server.audit.entries.find((e) => e.by === 'garbage-collector' && e.verb === 'delete'),
    ).toMatchObject({ resource: 'pods', name: 'owner' });
  });

  it('orphans or foreground-deletes dependents by propagationPolicy', async () => {
    const owner = (name: string) => {
      const er = twin.server.api.create('arc', 'ephemeralrunners', NS, erBody(name));
      const ref = {
        apiVersion: 'actions.github.com/v1alpha1',
        kind: 'EphemeralRunner',
        name,
        uid: er.metadata.uid as string,
        controller: true,
        blockOwnerDeletion: true,
      };
      twin.server.api.create(
        'arc',
        'pods',
        NS,
        minimalPod(name, {
          metadata: { name, ownerReferences: [ref], finalizers: ['example.com/hold'] },
        }),
      );
    };
    owner('orphaner');
    await twin.custom.deleteNamespacedCustomObject({
      ...ERS,
      name: 'orphaner',
      propagationPolicy: 'Orphan',
    });
    await expectApiError(
      twin.custom.getNamespacedCustomObject({
        ...ERS,
        name: 'orphaner',
      }),
      404,
    );
    const orphan = await twin.core.readNamespacedPod({ namespace: NS, name: 'orphaner' });
    expect(orphan.metadata?.ownerReferences).toBeUndefined();
    expect(orphan.metadata?.deletionTimestamp).toBeUndefined();

    owner('fg');
    await twin.custom.deleteNamespacedCustomObject({
      ...ERS,
      name: 'fg',
      propagationPolicy: 'Foreground',
    });
    const waiting = (await twin.custom.getNamespacedCustomObject({
      ...ERS,
      name: 'fg',
    })) as { metadata: { finalizers: string[] } };
    expect(waiting.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(
      (await twin.core.readNamespacedPod({ namespace: NS, name: 'fg' })).metadata
        ?.deletionTimestamp,
    ).toBeDefined();
    // The dependent's own finalizer holds it; releasing it lets the owner go.
    await twin.core.patchNamespacedPod(
      { namespace: NS, name: 'fg', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await expectApiError(twin.core.readNamespacedPod({ namespace: NS, name: 'fg' }), 404);
    await expectApiError(
      twin.custom.getNamespacedCustomObject({
        ...ERS,
        name: 'fg',
      }),
      404,
    );
  });

  it('evicts a pod through policy/v1, which sets DisruptionTarget and deletes gracefully', async () => {
    twin.server.api.create('arc', 'pods', NS, minimalPod('victim'));
    twin.server.api.modify(
      'scheduler',
      'pods',
      NS,
      'victim',
      (p) => void ((p.spec as { nodeName?: string }).nodeName = 'node-1'),
    );
    await twin.core.createNamespacedPodEviction({
      namespace: NS,
      name: 'victim',
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'victim', namespace: NS },
      },
    });
    const pod = await twin.core.readNamespacedPod({ namespace: NS, name: 'victim' });
    expect(pod.metadata?.deletionTimestamp).toBeDefined();
    expect(pod.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    expect(
      twin.server.audit.entries.filter((e) => e.by === 'runner-medic').map((e) => e.verb),
    ).toEqual(['evict']);
  });

  it('honours dryRun=All without persisting or counting as a change', async () => {
    const res = await twin.call(
      'POST',
      `/api/v1/namespaces/${NS}/pods?dryRun=All`,
      JSON.stringify(minimalPod('dry')),
    );
    expect(res.status).toBe(201);
    expect(twin.server.api.tryGet('pods', NS, 'dry')).toBeUndefined();
    expect(twin.server.audit.entries.at(-1)).toMatchObject({
      verb: 'create',
      name: 'dry',
      detail: 'dryRun',
    });
  });
});
