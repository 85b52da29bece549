/**
 * Every call `runner-medic serve` makes to the API server, as RBAC sees it: the engine's own
 * (functions/adapters/kubernetes/kube-access.ts, for a cluster with runner namespaces) and serve's
 * beyond it, its informers on Events (functions/serve/cluster-observer.ts) and its Lease
 * (functions/serve/lease-elector.ts). infra/kubernetes/in-cluster/rbac-*.yaml grant exactly these,
 * and test/doctor/doctor-in-cluster.test.ts holds the two together: change serve's calls, this
 * list and the manifests at once. `doctor --in-cluster` asks for each of them.
 */
import type { ServeSettings } from '../serve/serve-settings.js';
import type { AccessAttributes } from './cluster-checks.js';
import { accessToReview } from './cluster-checks.js';

interface ServeOwnAccess {
  verb: 'list' | 'watch' | 'create' | 'get' | 'update';
  group: '' | 'coordination.k8s.io';
  resource: 'events' | 'leases';
  /**
   * `event-namespaces`: each runner namespace and NODE_EVENTS_NAMESPACE.
   * `lease-namespace`: POD_NAMESPACE, any name (RBAC cannot limit `create` by name).
   * `lease`: the Lease itself, LEASE_NAME in POD_NAMESPACE.
   */
  scope: 'event-namespaces' | 'lease-namespace' | 'lease';
  /** What in serve makes this call. */
  by: string;
}

const SERVE_OWN_ACCESS: readonly ServeOwnAccess[] = [
  // Events replace kubernetes-event-exporter: each namespace's Events are listed, then watched.
  { verb: 'list', group: '', resource: 'events', scope: 'event-namespaces', by: 'informers' },
  { verb: 'watch', group: '', resource: 'events', scope: 'event-namespaces', by: 'informers' },
  // The first replica creates the Lease; every replica reads it and updates it to take or renew.
  {
    verb: 'create',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'lease-namespace',
    by: 'leader election',
  },
  {
    verb: 'get',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'lease',
    by: 'leader election',
  },
  {
    verb: 'update',
    group: 'coordination.k8s.io',
    resource: 'leases',
    scope: 'lease',
    by: 'leader election',
  },
];

export type ServeAccessSettings = Pick<
  ServeSettings,
  'runnerNamespaces' | 'nodeEventsNamespace' | 'lease'
>;

/**
 * The SelfSubjectAccessReviews serve's calls need under these settings: the engine's in each
 * runner namespace and on nodes (the informers list and watch pods, EphemeralRunners and nodes
 * with the same verbs), then Events in each event namespace and the Lease.
 */
export function serveAccessToReview(settings: ServeAccessSettings): AccessAttributes[] {
  const eventNamespaces = [
    ...new Set([...settings.runnerNamespaces, settings.nodeEventsNamespace]),
  ];
  const { namespace, name } = settings.lease;
  const own = SERVE_OWN_ACCESS.flatMap(({ verb, group, resource, scope }) => {
    const base = { verb, group, resource };
    switch (scope) {
      case 'event-namespaces':
        return eventNamespaces.map((ns) => ({ ...base, namespace: ns }));
      case 'lease-namespace':
        return [{ ...base, namespace }];
      case 'lease':
        return [{ ...base, namespace, name }];
    }
  });
  return [...accessToReview(settings.runnerNamespaces), ...own];
}
