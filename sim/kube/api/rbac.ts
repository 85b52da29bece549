/**
 * RBAC as the real API server evaluates it (plugin/pkg/auth/authorizer/rbac/rbac.go and
 * pkg/registry/rbac/validation/rule.go in kubernetes/kubernetes): ClusterRoleBindings grant
 * everywhere, RoleBindings only in their own namespace (also when they reference a ClusterRole),
 * subjects are users, groups or service accounts, and a rule matches on verbs, API groups,
 * resources (`pods`, `pods/eviction`, `*`, a star-slash subresource such as `*\/status`), resourceNames and nonResourceURLs.
 * The group `system:masters` is allowed everything (the apiserver's privileged-group authorizer).
 *
 * A denial is a 403 whose message is the apiserver's own (responsewriters/errors.go,
 * forbiddenMessage, wrapped by apierrors.NewForbidden).
 */
import { ApiError } from './errors.js';
import type { ObjectStore } from './store.js';
import type { KubeObject } from '../types.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Who is calling: what a bearer token authenticates to. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

/** authorizer.Attributes: what is being asked. */
export interface RequestAttributes {
  verb: string;
  /** Resource request (true) or a non-resource path such as `/version`. */
  resourceRequest: boolean;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests only. */
  path?: string;
}

export interface Decision {
  allowed: boolean;
  /** `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, or empty. */
  reason: string;
}

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

type RoleObject = KubeObject & { rules?: PolicyRule[] };
type BindingObject = KubeObject & { roleRef: RoleRef; subjects?: Subject[] };

const SUPERUSER_GROUP = 'system:masters';

/** rule.go VerbMatches */
function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === '*' || v === verb);
}

/** rule.go APIGroupMatches */
function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

/**
 * rule.go ResourceMatches: `*`, an exact `resource` or `resource/subresource`, or
 * `*\/subresource`. (`pods/*` is not a wildcard for subresources in the real matcher.)
 */
function resourceMatches(rule: PolicyRule, resource: string, subresource = ''): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some(
    (r) =>
      r === '*' ||
      r === combined ||
      (subresource !== '' &&
        r.length === subresource.length + 2 &&
        r.startsWith('*/') &&
        r.endsWith(subresource)),
  );
}

/** rule.go ResourceNameMatches: an empty list allows every name (and none). */
function resourceNameMatches(rule: PolicyRule, name = ''): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** rule.go NonResourceURLMatches: exact, `*`, or a trailing-`*` prefix. */
function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

/** rbac.go RuleAllows */
function ruleAllows(attrs: RequestAttributes, rule: PolicyRule): boolean {
  if (attrs.resourceRequest) {
    return (
      verbMatches(rule, attrs.verb) &&
      apiGroupMatches(rule, attrs.apiGroup ?? '') &&
      resourceMatches(rule, attrs.resource ?? '', attrs.subresource ?? '') &&
      resourceNameMatches(rule, attrs.name ?? '')
    );
  }
  return verbMatches(rule, attrs.verb) && nonResourceURLMatches(rule, attrs.path ?? '');
}

/** rule.go appliesToUser */
function subjectMatches(user: UserInfo, subject: Subject, bindingNamespace = ''): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return user.username === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount')
    return `${s.kind} "${s.name}/${s.namespace || bindingNamespace}"`;
  return `${s.kind} "${s.name}"`;
}

/** Evaluates RBAC objects in the twin's store; the objects change live, as in a cluster. */
export class RbacAuthorizer {
  constructor(private readonly store: ObjectStore) {}

  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    if (user.groups.includes(SUPERUSER_GROUP)) return { allowed: true, reason: '' };
    for (const b of this.store.scan(`clusterrolebindings.${RBAC_GROUP}`) as BindingObject[]) {
      const subject = (b.subjects ?? []).find((s) => subjectMatches(user, s));
      if (!subject || b.roleRef?.kind !== 'ClusterRole') continue;
      const role = this.role('ClusterRole', b.roleRef.name);
      if ((role?.rules ?? []).some((r) => ruleAllows(attrs, r)))
        return {
          allowed: true,
          reason: `RBAC: allowed by ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${b.roleRef.name}" to ${describeSubject(subject, '')}`,
        };
    }
    if (attrs.resourceRequest && attrs.namespace) {
      const ns = attrs.namespace;
      for (const b of this.store.scan(`rolebindings.${RBAC_GROUP}`, ns) as BindingObject[]) {
        const subject = (b.subjects ?? []).find((s) => subjectMatches(user, s, ns));
        if (!subject) continue;
        const role = this.role(b.roleRef?.kind, b.roleRef?.name, ns);
        if ((role?.rules ?? []).some((r) => ruleAllows(attrs, r)))
          return {
            allowed: true,
            reason: `RBAC: allowed by RoleBinding "${b.metadata.name}/${ns}" of ${b.roleRef.kind} "${b.roleRef.name}" to ${describeSubject(subject, ns)}`,
          };
      }
    }
    return { allowed: false, reason: '' };
  }

  private role(kind: string | undefined, name: string | undefined, ns?: string) {
    if (!name) return undefined;
    if (kind === 'ClusterRole')
      return this.store.get(`clusterroles.${RBAC_GROUP}`, undefined, name) as
        RoleObject | undefined;
    if (kind === 'Role' && ns)
      return this.store.get(`roles.${RBAC_GROUP}`, ns, name) as RoleObject | undefined;
    return undefined;
  }
}

/** responsewriters/errors.go forbiddenMessage */
function forbiddenMessage(user: UserInfo, attrs: RequestAttributes): string {
  if (!attrs.resourceRequest)
    return `User "${user.username}" cannot ${attrs.verb} path "${attrs.path ?? ''}"`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  if (attrs.namespace)
    return `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup ?? ''}" in the namespace "${attrs.namespace}"`;
  return `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup ?? ''}" at the cluster scope`;
}

/** The 403 `Status` the apiserver answers (apierrors.NewForbidden around forbiddenMessage). */
export function forbidden(user: UserInfo, attrs: RequestAttributes, reason = ''): ApiError {
  const msg = forbiddenMessage(user, attrs) + (reason ? `: ${reason}` : '');
  const group = attrs.apiGroup ?? '';
  const resource = attrs.resource ?? '';
  if (!attrs.resourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${msg}`, {});
  const qualified = group ? `${resource}.${group}` : resource;
  const name = attrs.name ?? '';
  const message = name
    ? `${qualified} "${name}" is forbidden: ${msg}`
    : `${qualified} is forbidden: ${msg}`;
  return new ApiError(403, 'Forbidden', message, {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    kind: resource,
  });
}

/**
 * The bootstrap policy every cluster has (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
 * authenticated users may read discovery and review their own access.
 */
export function bootstrapPolicy(): KubeObject[] {
  const crb = (name: string, role: string, group: string): KubeObject => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: {
      name,
      labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
      annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
    },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: RBAC_GROUP, kind: 'Group', name: group }],
  });
  const cr = (name: string, rules: PolicyRule[]): KubeObject => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: {
      name,
      labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
      annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
    },
    rules,
  });
  return [
    cr('system:basic-user', [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      {
        verbs: ['create'],
        apiGroups: ['authentication.k8s.io'],
        resources: ['selfsubjectreviews'],
      },
    ]),
    cr('system:discovery', [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ]),
    crb('system:basic-user', 'system:basic-user', 'system:authenticated'),
    crb('system:discovery', 'system:discovery', 'system:authenticated'),
  ];
}
