/**
 * Write validation. Custom objects are pruned of unknown fields and validated against the CRD's
 * openAPIV3Schema with ajv (as the real API server does with structural schemas); core objects
 * get the checks the models and clients can trip over (names, labels, required fields).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { StatusCause } from './errors.js';
import { loadCrd } from './crd-schemas.js';
import { validateLabelKey, validateLabelValue } from './label-selector.js';
import type { ResourceDef } from './resources.js';
import { validateWorkload } from './workload-validation.js';
import type { KubeObject } from '../types.js';

export type SchemaFlavour = '0.9' | '0.13' | '0.15';

type Schema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const compiled = new Map<string, { validate: ValidateFunction; schema: Schema }>();

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

function compiledFor(def: ResourceDef, flavour: SchemaFlavour) {
  const key = `${def.plural}@${flavour}`;
  let hit = compiled.get(key);
  if (!hit) {
    const schema = flavourSchema(def.plural, flavour, loadCrd(def.plural).schema);
    // Unoptimised code: the same checks and errors, compiled in half the CPU (about 0.5 s less
    // for ARC's three CRDs, paid by every process that validates an ARC object).
    const ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateFormats: true,
      code: { optimize: false },
    });
    addFormats(ajv);
    ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    hit = { validate: ajv.compile(schema), schema };
    compiled.set(key, hit);
  }
  return hit;
}

/** A custom resource's openAPIV3Schema, as this schema flavour serves it. */
export function crdSchema(def: ResourceDef, flavour: SchemaFlavour): Schema {
  return compiledFor(def, flavour).schema;
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

function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

function causeFromAjv(e: ErrorObject, obj: unknown): StatusCause {
  const base = fieldPath(e.instancePath);
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    const field = base ? `${base}.${prop}` : prop;
    return { reason: 'FieldValueRequired', message: 'Required value', field };
  }
  let value: unknown = obj;
  for (const seg of e.instancePath.split('/').slice(1))
    value = (value as Record<string, unknown> | undefined)?.[
      seg.replace(/~1/g, '/').replace(/~0/g, '~')
    ];
  const shown = JSON.stringify(value);
  if (e.keyword === 'type') {
    const t = (e.params as { type: string }).type;
    return {
      reason: 'FieldValueTypeInvalid',
      field: base,
      message: `Invalid value: "${typeof value}": ${base} in body must be of type ${t}: ${shown}`,
    };
  }
  if (e.keyword === 'enum') {
    const allowed = (e.params as { allowedValues: unknown[] }).allowedValues
      .map((v) => JSON.stringify(v))
      .join(', ');
    return {
      reason: 'FieldValueNotSupported',
      field: base,
      message: `Unsupported value: ${shown}: supported values: ${allowed}`,
    };
  }
  return {
    reason: 'FieldValueInvalid',
    field: base,
    message: `Invalid value: ${shown}: ${base} in body ${e.message ?? 'is invalid'}`,
  };
}

/** Prunes and validates a custom object; returns the pruned copy or the causes of rejection. */
export function validateCustom(
  def: ResourceDef,
  obj: KubeObject,
  flavour: SchemaFlavour,
): { object: KubeObject } | { causes: StatusCause[] } {
  const { validate, schema } = compiledFor(def, flavour);
  const props = schema.properties as Record<string, Schema>;
  const pruned: KubeObject = { ...obj };
  for (const k of Object.keys(pruned)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    if (!(k in props)) delete pruned[k];
    else pruned[k] = prune(pruned[k], props[k]);
  }
  if (validate(pruned)) return { object: pruned };
  const causes = (validate.errors ?? [])
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'if')
    .map((e) => causeFromAjv(e, pruned));
  return { causes: dedupe(causes) };
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
