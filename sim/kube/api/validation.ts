/**
 * Write validation. Custom objects are pruned of unknown fields and validated against the CRD's
 * openAPIV3Schema (structural-schema.ts, as the real API server does); core objects
 * get the checks the models and clients can trip over (names, labels, required fields).
 */
import type { StatusCause } from './errors.js';
import { loadCrd } from './crd-schemas.js';
import { validateLabelKey, validateLabelValue } from './label-selector.js';
import type { ResourceDef } from './resources.js';
import { schemaViolations, type Schema, type SchemaViolation } from './structural-schema.js';
import { validateWorkload } from './workload-validation.js';
import type { KubeObject } from '../types.js';

export type SchemaFlavour = '0.9' | '0.13' | '0.15';

const schemas = new Map<string, Schema>();

/**
 * ARC <= 0.11 stored `failures` as map[string]bool and kept runnerJITConfig in status. ARC 0.15
 * removed the ERS status counts (#4570), `currentReplicas` (required before) included; the
 * vendored CRDs predate 0.15, so the 0.15 flavour drops them.
 */
function flavourSchema(plural: string, flavour: SchemaFlavour, schema: Schema): Schema {
  if (flavour === '0.15' && plural === 'ephemeralrunnersets') {
    const copy = structuredClone(schema);
    const status = (copy.properties as Record<string, Schema>).status as Schema;
    const props = status.properties as Record<string, Schema>;
    for (const f of [
      'currentReplicas',
      'pendingEphemeralRunners',
      'runningEphemeralRunners',
      'failedEphemeralRunners',
    ])
      delete props[f];
    delete status.required;
    return copy;
  }
  if (flavour !== '0.9' || plural !== 'ephemeralrunners') return schema;
  const copy = structuredClone(schema);
  const status = (copy.properties as Record<string, Schema>).status as Schema;
  const props = status.properties as Record<string, Schema>;
  props.failures = { type: 'object', additionalProperties: { type: 'boolean' } };
  props.runnerJITConfig = { type: 'string' };
  delete props.jobId;
  return copy;
}

/** A custom resource's openAPIV3Schema, as this schema flavour serves it. */
export function crdSchema(def: ResourceDef, flavour: SchemaFlavour): Schema {
  const key = `${def.plural}@${flavour}`;
  let schema = schemas.get(key);
  if (!schema) {
    schema = flavourSchema(def.plural, flavour, loadCrd(def.plural).schema);
    schemas.set(key, schema);
  }
  return schema;
}

/** Removes fields the schema does not declare (structural-schema pruning). */
function prune(value: unknown, schema: Schema | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = schema.items as Schema | undefined;
    return items ? value.map((v) => prune(v, items)) : value;
  }
  const obj = value as Record<string, unknown>;
  const props = schema.properties as Record<string, Schema> | undefined;
  const additional = schema.additionalProperties;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return obj;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (props && k in props) out[k] = prune(v, props[k]);
    else if (additional && typeof additional === 'object') out[k] = prune(v, additional as Schema);
    else if (!props && additional === undefined) out[k] = v;
  }
  return out;
}

function causeOf(v: SchemaViolation): StatusCause {
  if (v.keyword === 'required')
    return { reason: 'FieldValueRequired', message: 'Required value', field: v.field };
  const shown = JSON.stringify(v.value);
  if (v.keyword === 'type')
    return {
      reason: 'FieldValueTypeInvalid',
      field: v.field,
      message: `Invalid value: "${typeof v.value}": ${v.field} in body must be of type ${v.type}: ${shown}`,
    };
  if (v.keyword === 'enum')
    return {
      reason: 'FieldValueNotSupported',
      field: v.field,
      message: `Unsupported value: ${shown}: supported values: ${v.allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    };
  return {
    reason: 'FieldValueInvalid',
    field: v.field,
    message: `Invalid value: ${shown}: ${v.field} in body ${v.message}`,
  };
}

/** Prunes and validates a custom object; returns the pruned copy or the causes of rejection. */
export function validateCustom(
  def: ResourceDef,
  obj: KubeObject,
  flavour: SchemaFlavour,
): { object: KubeObject } | { causes: StatusCause[] } {
  const schema = crdSchema(def, flavour);
  const props = schema.properties as Record<string, Schema>;
  const pruned: KubeObject = { ...obj };
  for (const k of Object.keys(pruned)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    if (!(k in props)) delete pruned[k];
    else pruned[k] = prune(pruned[k], props[k]);
  }
  const violations = schemaViolations(pruned, schema);
  if (violations.length === 0) return { object: pruned };
  return { causes: dedupe(violations.map(causeOf)) };
}

function dedupe(causes: StatusCause[]): StatusCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}|${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Checks every object must pass: name, labels, annotations, owner references. */
export function validateMeta(def: ResourceDef, obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const m = obj.metadata;
  const name = m.name ?? '';
  if (!name)
    causes.push({
      reason: 'FieldValueRequired',
      field: 'metadata.name',
      message: 'Required value: name or generateName is required',
    });
  else if (def.group === 'rbac.authorization.k8s.io') {
    // RBAC names are path segments (ValidateRBACName): `system:basic-user` is valid.
    if (name === '.' || name === '..' || /[/%]/.test(name))
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: `Invalid value: "${name}": may not contain '/' or '%', and may not be '.' or '..'`,
      });
  } else if (
    name.length > 253 ||
    !DNS_SUBDOMAIN.test(name) ||
    (def.plural === 'namespaces' && !DNS_LABEL.test(name))
  ) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    });
  }
  for (const [k, v] of Object.entries(m.labels ?? {})) {
    const ke = validateLabelKey(k);
    if (ke)
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'metadata.labels',
        message: `Invalid value: "${k}": ${ke}`,
      });
    if (typeof v !== 'string')
      causes.push({
        reason: 'FieldValueTypeInvalid',
        field: `metadata.labels`,
        message: `Invalid value: label values must be strings`,
      });
    else {
      const ve = validateLabelValue(v);
      if (ve)
        causes.push({
          reason: 'FieldValueInvalid',
          field: 'metadata.labels',
          message: `Invalid value: "${v}": ${ve}`,
        });
    }
  }
  for (const k of Object.keys(m.annotations ?? {})) {
    const ke = validateLabelKey(k);
    if (ke)
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'metadata.annotations',
        message: `Invalid value: "${k}": ${ke}`,
      });
  }
  for (const [i, ref] of (m.ownerReferences ?? []).entries()) {
    for (const f of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (!ref[f])
        causes.push({
          reason: 'FieldValueRequired',
          field: `metadata.ownerReferences[${i}].${f}`,
          message: 'Required value',
        });
    }
  }
  if ((m.ownerReferences ?? []).filter((r) => r.controller).length > 1) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.ownerReferences',
      message: 'Only one reference can have Controller set to true',
    });
  }
  return causes;
}

/** Resource-specific checks for core kinds. */
export function validateCore(def: ResourceDef, obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  if (def.plural === 'pods') {
    const spec = obj.spec as { containers?: { name?: string }[] } | undefined;
    if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0) {
      causes.push({
        reason: 'FieldValueRequired',
        field: 'spec.containers',
        message: 'Required value',
      });
    } else {
      spec.containers.forEach((c, i) => {
        if (!c.name)
          causes.push({
            reason: 'FieldValueRequired',
            field: `spec.containers[${i}].name`,
            message: 'Required value',
          });
      });
    }
  }
  if (def.group === 'rbac.authorization.k8s.io') causes.push(...validateRbac(def, obj));
  causes.push(...validateWorkload(def, obj));
  if (def.plural === 'events') {
    const io = obj.involvedObject as { name?: string } | undefined;
    if (!io)
      causes.push({
        reason: 'FieldValueRequired',
        field: 'involvedObject',
        message: 'Required value',
      });
  }
  return causes;
}

/** pkg/apis/rbac/validation: rules need verbs; bindings need a roleRef and known subject kinds. */
function validateRbac(def: ResourceDef, obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const required = (field: string) =>
    causes.push({ reason: 'FieldValueRequired', field, message: 'Required value' });
  if (def.kind === 'Role' || def.kind === 'ClusterRole') {
    const rules = (obj.rules ?? []) as {
      verbs?: unknown;
      apiGroups?: unknown;
      resources?: unknown;
      nonResourceURLs?: unknown;
    }[];
    if (!Array.isArray(rules)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'rules', message: 'Invalid value' });
      return causes;
    }
    rules.forEach((r, i) => {
      if (!Array.isArray(r.verbs) || r.verbs.length === 0) required(`rules[${i}].verbs`);
      const urls = Array.isArray(r.nonResourceURLs) ? r.nonResourceURLs.length : 0;
      if (urls > 0 && def.kind === 'Role')
        causes.push({
          reason: 'FieldValueInvalid',
          field: `rules[${i}].nonResourceURLs`,
          message: `Invalid value: ${JSON.stringify(r.nonResourceURLs)}: namespaced rules cannot apply to non-resource URLs`,
        });
      if (urls === 0) {
        if (!Array.isArray(r.apiGroups) || r.apiGroups.length === 0)
          required(`rules[${i}].apiGroups`);
        if (!Array.isArray(r.resources) || r.resources.length === 0)
          required(`rules[${i}].resources`);
      }
    });
  }
  if (def.kind === 'RoleBinding' || def.kind === 'ClusterRoleBinding') {
    const ref = obj.roleRef as { apiGroup?: string; kind?: string; name?: string } | undefined;
    if (!ref) required('roleRef');
    else {
      if (!ref.name) required('roleRef.name');
      const kinds = def.kind === 'ClusterRoleBinding' ? ['ClusterRole'] : ['Role', 'ClusterRole'];
      if (!ref.kind || !kinds.includes(ref.kind))
        causes.push({
          reason: 'FieldValueNotSupported',
          field: 'roleRef.kind',
          message: `Unsupported value: "${ref.kind ?? ''}": supported values: ${kinds.map((k) => `"${k}"`).join(', ')}`,
        });
      if (ref.apiGroup !== 'rbac.authorization.k8s.io')
        causes.push({
          reason: 'FieldValueNotSupported',
          field: 'roleRef.apiGroup',
          message: `Unsupported value: "${ref.apiGroup ?? ''}": supported values: "rbac.authorization.k8s.io"`,
        });
    }
    const subjects = (obj.subjects ?? []) as { kind?: string; name?: string }[];
    (Array.isArray(subjects) ? subjects : []).forEach((s, i) => {
      if (!s.name) required(`subjects[${i}].name`);
      if (!['User', 'Group', 'ServiceAccount'].includes(s.kind ?? ''))
        causes.push({
          reason: 'FieldValueNotSupported',
          field: `subjects[${i}].kind`,
          message: `Unsupported value: "${s.kind ?? ''}": supported values: "ServiceAccount", "User", "Group"`,
        });
    });
  }
  return causes;
}
