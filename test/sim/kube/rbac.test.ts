import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Pod,
} from '@kubernetes/client-node';
import { ManifestError, SimCluster } from '../../../sim/kube/index.js';
import { minimalPod } from './helpers.js';

const NS = 'arc-runners';
const OTHER = 'team-b';

/** What a denied call answers: the apiserver's Status, reason Forbidden. */
async function forbidden(p: Promise<unknown>): Promise<{ message: string; details: unknown }> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiException);
    const err = e as ApiException<unknown>;
    expect(err.code).toBe(403);
    const body = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as {
      message: string;
      details: unknown;
    };
    expect(body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
    });
    return body;
  }
  throw new Error('expected HTTP 403');
}

/** A namespaced grant, shaped like a per-runner-namespace Role plus a node-reading ClusterRole. */
const NAMESPACED_RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: medic-nodes}
rules:
  - {apiGroups: [''], resources: [nodes], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: medic-nodes}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: medic-nodes}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: runner-medic}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: medic, namespace: placeholder}
rules:
  - {apiGroups: [''], resources: [pods], verbs: [get, list, watch, delete]}
  - {apiGroups: [''], resources: [pods/eviction], verbs: [create]}
  - {apiGroups: [''], resources: [secrets], verbs: [get], resourceNames: [only-this]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: medic, namespace: placeholder}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: medic}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: runner-medic}]
`;

describe('RBAC in the cluster twin, driven by @kubernetes/client-node', () => {
  let cluster: SimCluster;
  const clients = (actor: string) => {
    const kc = new KubeConfig();
    kc.loadFromString(cluster.kubeconfig(actor));
    return {
      core: kc.makeApiClient(CoreV1Api),
      custom: kc.makeApiClient(CustomObjectsApi),
      authz: kc.makeApiClient(AuthorizationV1Api),
      authn: kc.makeApiClient(AuthenticationV1Api),
      rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    };
  };

  beforeEach(async () => {
    cluster = await new SimCluster({ seed: 3, rbac: true }).start();
    cluster.addNode({ name: 'node-a' });
    for (const ns of [NS, OTHER]) {
      cluster.createNamespace(ns);
      cluster.api.create('scenario', 'pods', ns, minimalPod('p1'));
      cluster.api.create('scenario', 'pods', ns, minimalPod('p2'));
    }
  });

  afterEach(() => cluster.stop());

  it('grants exactly what the shipped infra/kubernetes/rbac/ manifests grant', async () => {
    cluster.applyManifestFile('infra/kubernetes/rbac/cluster.yaml');
    const loaded = cluster.applyManifestFile('infra/kubernetes/rbac/runner-namespace.yaml', {
      namespaces: [NS],
    });
    expect(loaded.map((o) => `${o.kind} ${o.metadata.namespace}`)).toEqual([
      `Role ${NS}`,
      `RoleBinding ${NS}`,
    ]);
    const { core, custom } = clients('runner-medic');
    expect((await core.listNamespacedPod({ namespace: NS })).items).toHaveLength(2);
    expect((await core.listNode()).items).toHaveLength(1);
    await custom.listNamespacedCustomObject({
      group: 'actions.github.com',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'ephemeralrunners',
    });
    await forbidden(core.listNamespacedPod({ namespace: OTHER }));
    await forbidden(core.listPodForAllNamespaces());

    const create = await forbidden(
      core.createNamespacedPod({ namespace: NS, body: minimalPod('p3') as V1Pod }),
    );
    expect(create.message).toBe(
      'pods is forbidden: User "runner-medic" cannot create resource "pods" in API group "" in the namespace "arc-runners"',
    );
    expect(create.details).toEqual({ kind: 'pods' });
    const node = await forbidden(core.deleteNode({ name: 'node-a' }));
    expect(node.message).toBe(
      'nodes "node-a" is forbidden: User "runner-medic" cannot delete resource "nodes" in API group "" at the cluster scope',
    );
    const evict = await forbidden(
      core.createNamespacedPodEviction({
        name: 'p1',
        namespace: NS,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p1' } },
      }),
    );
    expect(evict.message).toBe(
      'pods "p1" is forbidden: User "runner-medic" cannot create resource "pods/eviction" in API group "" in the namespace "arc-runners"',
    );
    const ers = await forbidden(
      custom.deleteNamespacedCustomObject({
        group: 'actions.github.com',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'ephemeralrunnersets',
        name: 'x',
      }),
    );
    expect(ers.message).toBe(
      'ephemeralrunnersets.actions.github.com "x" is forbidden: User "runner-medic" cannot delete resource "ephemeralrunnersets" in API group "actions.github.com" in the namespace "arc-runners"',
    );
    // The denial changed nothing, and the allowed delete went through.
    expect(cluster.pods(NS)).toHaveLength(2);
    await core.deleteNamespacedPod({ namespace: NS, name: 'p2', gracePeriodSeconds: 0 });
    expect(cluster.pods(NS).map((p) => p.metadata.name)).toEqual(['p1']);
    const denied = cluster.audit.requests.filter((r) => r.by === 'runner-medic' && r.code === 403);
    expect(denied.map((r) => r.verb)).toEqual([
      'list',
      'list',
      'create',
      'delete',
      'create',
      'delete',
    ]);
  });

  it('a Role grants in its namespace only; a ClusterRoleBinding at the cluster scope', async () => {
    cluster.applyManifest(NAMESPACED_RBAC, { namespaces: [NS] });
    const { core } = clients('runner-medic');
    expect((await core.listNamespacedPod({ namespace: NS })).items).toHaveLength(2);
    expect((await core.listNode()).items).toHaveLength(1);
    const other = await forbidden(core.listNamespacedPod({ namespace: OTHER }));
    expect(other.message).toBe(
      'pods is forbidden: User "runner-medic" cannot list resource "pods" in API group "" in the namespace "team-b"',
    );
    const all = await forbidden(core.listPodForAllNamespaces());
    expect(all.message).toBe(
      'pods is forbidden: User "runner-medic" cannot list resource "pods" in API group "" at the cluster scope',
    );
    // pods/eviction is its own grant; `pods` alone would not cover it.
    await core.createNamespacedPodEviction({
      name: 'p1',
      namespace: NS,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p1' } },
    });
    await forbidden(
      core.createNamespacedPodEviction({
        name: 'p1',
        namespace: OTHER,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p1' } },
      }),
    );
    // resourceNames: that one secret may be read, no other, and never listed.
    cluster.api.create('scenario', 'secrets', NS, { metadata: { name: 'only-this' } });
    cluster.api.create('scenario', 'secrets', NS, { metadata: { name: 'not-this' } });
    await core.readNamespacedSecret({ namespace: NS, name: 'only-this' });
    await forbidden(core.readNamespacedSecret({ namespace: NS, name: 'not-this' }));
    await forbidden(core.listNamespacedSecret({ namespace: NS }));
  });

  it('a ClusterRole bound by a RoleBinding applies only in that namespace', async () => {
    cluster.applyManifest(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-reader}
rules: [{apiGroups: ['*'], resources: ['*'], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read, namespace: ${OTHER}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-reader}
subjects:
  - {kind: User, name: user, apiGroup: rbac.authorization.k8s.io}
  - {kind: ServiceAccount, name: ci, namespace: ${OTHER}}
`);
    const { core } = clients('user');
    expect((await core.listNamespacedPod({ namespace: OTHER })).items).toHaveLength(2);
    await forbidden(core.listNamespacedPod({ namespace: NS }));
    await forbidden(core.listNode());
    // A service account subject matches system:serviceaccount:<ns>:<name>.
    cluster.apiServer.addActor('system:serviceaccount:team-b:ci');
    const sa = clients('system:serviceaccount:team-b:ci');
    expect((await sa.core.listNamespacedPod({ namespace: OTHER })).items).toHaveLength(2);
    await forbidden(sa.core.deleteNamespacedPod({ namespace: OTHER, name: 'p1' }));
  });

  it('answers SelfSubjectAccessReview and SelfSubjectReview', async () => {
    cluster.applyManifest(NAMESPACED_RBAC, { namespaces: [NS] });
    const { authz, authn } = clients('runner-medic');
    const review = (resourceAttributes: Record<string, string>) =>
      authz.createSelfSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes },
        },
      });
    const yes = await review({ namespace: NS, verb: 'delete', resource: 'pods' });
    expect(yes.status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "medic/arc-runners" of Role "medic" to Group "runner-medic"',
    });
    const evict = await review({
      namespace: NS,
      verb: 'create',
      resource: 'pods',
      subresource: 'eviction',
    });
    expect(evict.status?.allowed).toBe(true);
    const no = await review({ namespace: OTHER, verb: 'delete', resource: 'pods' });
    expect(no.status).toEqual({ allowed: false });
    const nodes = await review({ verb: 'list', resource: 'nodes' });
    expect(nodes.status?.reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "medic-nodes" of ClusterRole "medic-nodes" to Group "runner-medic"',
    );
    const me = await authn.createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(me.status?.userInfo).toEqual({
      username: 'runner-medic',
      groups: ['runner-medic', 'system:authenticated'],
    });
    // Reviews are not stored.
    expect(cluster.api.store.resources()).not.toContain(
      'selfsubjectaccessreviews.authorization.k8s.io',
    );
  });

  it('roles and bindings are API objects; admin may do anything, a user without grants nothing', async () => {
    const admin = clients('admin');
    await admin.rbac.createClusterRole({
      body: {
        metadata: { name: 'watch-nodes' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['watch', 'list'] }],
      },
    });
    const bad = admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'bad' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' },
        subjects: [{ kind: 'User', name: 'user' }],
      },
    });
    await expect(bad).rejects.toMatchObject({ code: 422 });
    await admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'user-nodes' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'watch-nodes',
        },
        subjects: [{ kind: 'User', name: 'user', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    const roles = await admin.rbac.listClusterRole();
    expect(roles.items.map((r) => r.metadata?.name)).toEqual(
      expect.arrayContaining(['watch-nodes', 'system:basic-user', 'system:discovery']),
    );
    const user = clients('user');
    expect((await user.core.listNode()).items).toHaveLength(1);
    await forbidden(user.core.readNode({ name: 'node-a' }));
    // The grant changes live: deleting the binding takes the access away.
    await admin.rbac.deleteClusterRoleBinding({ name: 'user-nodes' });
    await forbidden(user.core.listNode());
  });

  it('rejects a manifest that is not Kubernetes objects, creating nothing', () => {
    const before = cluster.api.store.currentRv();
    expect(() => cluster.applyManifest('kind: Role\nmetadata: {name: x}\n')).toThrow(ManifestError);
    expect(cluster.api.store.currentRv()).toBe(before);
  });

  it('is off by default: any token may do anything', async () => {
    const open = await new SimCluster({ seed: 3 }).start();
    try {
      open.createNamespace(NS);
      const kc = new KubeConfig();
      kc.loadFromString(open.kubeconfig('user'));
      const core = kc.makeApiClient(CoreV1Api);
      await core.createNamespacedPod({ namespace: NS, body: minimalPod('free') as V1Pod });
      expect(open.pods(NS)).toHaveLength(1);
    } finally {
      await open.stop();
    }
  });
});
