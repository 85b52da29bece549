/**
 * The resources `runner-medic serve` needs of the twin beyond ARC's and the core ones it already
 * served: the Lease it elects a leader with, and the objects its in-cluster manifests
 * (infra/kubernetes/in-cluster/) create, so `kubectl apply -k` against the twin is answered as a
 * real API server answers it.
 *
 * Leases are coordination.k8s.io/v1 (k8s.io/api/coordination/v1/types.go): `spec.holderIdentity`,
 * `leaseDurationSeconds`, `acquireTime`, `renewTime`, `leaseTransitions`. Nothing on the server
 * interprets them: leader election is the clients' protocol (k8s.io/client-go/tools/leaderelection),
 * held together only by optimistic concurrency: an update must carry the resourceVersion it read,
 * and a stale one is a 409 Conflict (kube-api.ts `update`), which is how two candidates that both
 * saw an expired Lease cannot both take it.
 */
import type { ResourceDef } from './resources.js';

const ALL_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];
const META_FIELDS = ['metadata.name', 'metadata.namespace'];

const builtIn = (
  group: string,
  kind: string,
  options: { plural?: string; shortNames?: string[]; status?: boolean } = {},
): ResourceDef => ({
  group,
  version: 'v1',
  plural: options.plural ?? `${kind.toLowerCase()}s`,
  singular: kind.toLowerCase(),
  kind,
  listKind: `${kind}List`,
  namespaced: true,
  ...(options.shortNames ? { shortNames: options.shortNames } : {}),
  verbs: ALL_VERBS,
  subresources: options.status ? ['status'] : [],
  fieldSelectors: META_FIELDS,
  custom: false,
});

export const IN_CLUSTER_RESOURCES: ResourceDef[] = [
  builtIn('coordination.k8s.io', 'Lease'),
  builtIn('', 'ServiceAccount', { shortNames: ['sa'] }),
  builtIn('', 'ConfigMap', { shortNames: ['cm'] }),
  builtIn('', 'Service', { shortNames: ['svc'], status: true }),
  builtIn('', 'PersistentVolumeClaim', { shortNames: ['pvc'], status: true }),
  builtIn('apps', 'Deployment', { shortNames: ['deploy'], status: true }),
  builtIn('policy', 'PodDisruptionBudget', { shortNames: ['pdb'], status: true }),
];
