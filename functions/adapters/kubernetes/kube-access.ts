/**
 * Every Kubernetes API call runner-medic's ClusterGateway (kube-cluster-gateway.ts) makes, as
 * RBAC sees it. infra/kubernetes/rbac/*.yaml grant exactly these and nothing more, and
 * test/infra/kube-access.test.ts holds the three together: it exercises every gateway method
 * against sim/kube and compares the requests it saw with this list, then checks the RBAC
 * manifests grant each call and no other. Change the adapter, this list and the RBAC together.
 */

type KubeVerb = 'get' | 'list' | 'watch' | 'delete' | 'patch';

export interface KubeAccess {
  verb: KubeVerb;
  /** API group: '' for the core group. */
  group: '' | 'actions.github.com';
  resource: 'pods' | 'ephemeralrunners' | 'nodes';
  subresource?: string;
  /**
   * `namespaced`: within one configured runner namespace (granted by a Role there).
   * `cluster`: a cluster-scoped resource or a list across all namespaces (a ClusterRole).
   */
  scope: 'namespaced' | 'cluster';
  /**
   * `always`: made whatever the configuration.
   * `all-namespaces`: only for a cluster configured without runner namespaces, where the
   * operator has chosen to let runner-medic list (and so needs to grant) every namespace.
   */
  when: 'always' | 'all-namespaces';
  /** The gateway methods that make this call. */
  by: readonly string[];
}

export const KUBE_ACCESS: readonly KubeAccess[] = [
  // Reads of a runner namespace: the sweep, and a trigger's view of one runner.
  {
    verb: 'list',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'namespaced',
    when: 'always',
    by: ['listRunners', 'listRunnersPage', 'findRunnerOfScaleSet', 'followRunners'],
  },
  {
    verb: 'list',
    group: '',
    resource: 'pods',
    scope: 'namespaced',
    when: 'always',
    by: ['listRunners', 'listRunnersPage', 'listRunnerPodsOnNode', 'followRunners'],
  },
  // The sweep follows each runner namespace: a short watch from the last resourceVersion.
  {
    verb: 'watch',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'namespaced',
    when: 'always',
    by: ['followRunners'],
  },
  {
    verb: 'watch',
    group: '',
    resource: 'pods',
    scope: 'namespaced',
    when: 'always',
    by: ['followRunners'],
  },
  {
    verb: 'get',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'namespaced',
    when: 'always',
    by: ['getEphemeralRunner', 'removeFinalizers'],
  },
  {
    verb: 'get',
    group: '',
    resource: 'pods',
    scope: 'namespaced',
    when: 'always',
    by: ['getPod', 'listRunnersPage'],
  },
  // Remediation: uid-guarded deletes, and the finalizer patch (policy permitting).
  {
    verb: 'delete',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'namespaced',
    when: 'always',
    by: ['deleteEphemeralRunner'],
  },
  {
    verb: 'delete',
    group: '',
    resource: 'pods',
    scope: 'namespaced',
    when: 'always',
    by: ['deletePod'],
  },
  {
    verb: 'patch',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'namespaced',
    when: 'always',
    by: ['removeFinalizers'],
  },
  // Nodes are cluster-scoped.
  {
    verb: 'list',
    group: '',
    resource: 'nodes',
    scope: 'cluster',
    when: 'always',
    by: ['listNodes', 'getNode', 'followNodes'],
  },
  {
    verb: 'watch',
    group: '',
    resource: 'nodes',
    scope: 'cluster',
    when: 'always',
    by: ['followNodes'],
  },
  // Without configured namespaces: lists across every namespace.
  {
    verb: 'list',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'cluster',
    when: 'all-namespaces',
    by: ['listRunners', 'findRunnerOfScaleSet', 'followRunners'],
  },
  {
    verb: 'watch',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    scope: 'cluster',
    when: 'all-namespaces',
    by: ['followRunners'],
  },
  {
    verb: 'list',
    group: '',
    resource: 'pods',
    scope: 'cluster',
    when: 'all-namespaces',
    by: ['listRunners', 'listRunnerPodsOnNode', 'followRunners'],
  },
  {
    verb: 'watch',
    group: '',
    resource: 'pods',
    scope: 'cluster',
    when: 'all-namespaces',
    by: ['followRunners'],
  },
];
