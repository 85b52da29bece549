/** The resources the twin serves, with what discovery, routing, selectors and tables need. */
import { IN_CLUSTER_RESOURCES } from './in-cluster-resources.js';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  priority?: number;
}

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  verbs: string[];
  subresources: ('status' | 'eviction')[];
  /** Field selectors beyond metadata.name / metadata.namespace. */
  fieldSelectors: string[];
  /** Defined by a CRD: its schema validates and prunes writes. */
  custom: boolean;
  printerColumns?: PrinterColumn[];
  categories?: string[];
  /** A review (SelfSubjectAccessReview, SelfSubjectReview): create-only, answered, not stored. */
  review?: boolean;
}

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

export const ARC_GROUP = 'actions.github.com';
const ARC_VERSION = 'v1alpha1';
export const ARC_API_VERSION = `${ARC_GROUP}/${ARC_VERSION}`;

export const RESOURCES: ResourceDef[] = [
  {
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    listKind: 'PodList',
    namespaced: true,
    shortNames: ['po'],
    verbs: ALL_VERBS,
    subresources: ['status', 'eviction'],
    fieldSelectors: [
      ...META_FIELDS,
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    custom: false,
    categories: ['all'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'nodes',
    singular: 'node',
    kind: 'Node',
    listKind: 'NodeList',
    namespaced: false,
    shortNames: ['no'],
    verbs: ALL_VERBS,
    subresources: ['status'],
    fieldSelectors: [...META_FIELDS, 'spec.unschedulable'],
    custom: false,
  },
  {
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    listKind: 'EventList',
    namespaced: true,
    shortNames: ['ev'],
    verbs: ALL_VERBS,
    subresources: [],
    fieldSelectors: [
      ...META_FIELDS,
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    custom: false,
  },
  {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    namespaced: false,
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: ['status'],
    fieldSelectors: [...META_FIELDS, 'status.phase'],
    custom: false,
  },
  {
    group: '',
    version: 'v1',
    plural: 'secrets',
    singular: 'secret',
    kind: 'Secret',
    listKind: 'SecretList',
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: [],
    fieldSelectors: [...META_FIELDS, 'type'],
    custom: false,
  },
  ...(
    [
      ['Role', true],
      ['RoleBinding', true],
      ['ClusterRole', false],
      ['ClusterRoleBinding', false],
    ] as const
  ).map(([kind, namespaced]): ResourceDef => ({
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    verbs: ALL_VERBS,
    subresources: [],
    fieldSelectors: META_FIELDS,
    custom: false,
  })),
  // Reviews are create-only and never stored: the server answers them (http-server.ts).
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    plural: 'selfsubjectaccessreviews',
    singular: '',
    kind: 'SelfSubjectAccessReview',
    listKind: 'SelfSubjectAccessReviewList',
    namespaced: false,
    verbs: ['create'],
    subresources: [],
    fieldSelectors: [],
    custom: false,
    review: true,
  },
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    plural: 'selfsubjectreviews',
    singular: '',
    kind: 'SelfSubjectReview',
    listKind: 'SelfSubjectReviewList',
    namespaced: false,
    verbs: ['create'],
    subresources: [],
    fieldSelectors: [],
    custom: false,
    review: true,
  },
  ...(['EphemeralRunner', 'EphemeralRunnerSet', 'AutoscalingRunnerSet'] as const).map(
    (kind): ResourceDef => ({
      group: ARC_GROUP,
      version: ARC_VERSION,
      plural: `${kind.toLowerCase()}s`,
      singular: kind.toLowerCase(),
      kind,
      listKind: `${kind}List`,
      namespaced: true,
      verbs: ALL_VERBS,
      subresources: ['status'],
      fieldSelectors: META_FIELDS,
      custom: true,
    }),
  ),
  // runner-medic serve's Lease, and what its in-cluster manifests create.
  ...IN_CLUSTER_RESOURCES,
];

export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** The store key of a resource: `pods`, `ephemeralrunners.actions.github.com`. */
export function resourceKey(def: ResourceDef): string {
  return def.group ? `${def.plural}.${def.group}` : def.plural;
}

export function findResource(
  group: string,
  version: string,
  plural: string,
): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

export function resourceByKind(apiVersion: string, kind: string): ResourceDef | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

export function resourceByName(name: string): ResourceDef {
  const def = RESOURCES.find((r) => r.plural === name || resourceKey(r) === name);
  if (!def) throw new Error(`unknown resource ${name}`);
  return def;
}
