/**
 * Server-side field validation, `?fieldValidation=Strict` (KEP-2885; "Field validation" in
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation). kubectl sends it
 * on create and patch once the server's OpenAPI v3 lists the parameter (openapi.ts); a field the
 * kind does not declare then fails the request instead of being dropped:
 * - create and update: 400 BadRequest, `Deployment in version "v1" cannot be handled as a
 *   Deployment: strict decoding error: unknown field "spec.replica"`
 *   (k8s.io/apiserver/pkg/endpoints/handlers/create.go, update.go);
 * - patch: 422 Invalid on the field `patch`, with the same strict decoding error about the
 *   patched object (handlers/patch.go applyPatchToObject).
 *
 * Without the parameter (or with Ignore or Warn) the twin keeps its earlier behaviour: built-in
 * objects are stored as sent and custom objects are pruned (validation.ts).
 *
 * The built-in kinds' fields come from @kubernetes/client-node's models, which are generated from
 * the Kubernetes OpenAPI document (its attributeTypeMap per definition); custom resources' from
 * their CRD's structural schema. The models load on the first strict request only.
 */
import type { KubeObject } from '../types.js';
import { ApiError, errors } from './errors.js';
import type { ResourceDef } from './resources.js';

interface Attribute {
  baseName: string;
  type: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };
type Models = Record<string, unknown>;

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

let models: Models | undefined;

/** Loads client-node's generated models (once); strict checks of built-in kinds need them. */
export async function loadFieldModels(): Promise<void> {
  models ??= (await import('@kubernetes/client-node/dist/gen/models/all.js')) as Models;
}

const OPTIONS_KIND: Record<string, string> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
};

/**
 * The `fieldValidation` query parameter of a write; other verbs ignore it. An unknown value fails
 * the request's options, as ValidateCreateOptions (and its Update and Patch siblings) does: 422.
 */
export function parseFieldValidation(
  method: string,
  value: string | null,
): FieldValidation | undefined {
  const kind = OPTIONS_KIND[method];
  if (!kind || value === null || value === '') return undefined;
  if (value === 'Ignore' || value === 'Warn' || value === 'Strict') return value;
  const message = `Unsupported value: "${value}": supported values: "Ignore", "Strict", "Warn"`;
  return invalidOptions(kind, message);
}

function invalidOptions(kind: string, message: string): never {
  throw new ApiError(
    422,
    'Invalid',
    `${kind}.meta.k8s.io "" is invalid: fieldValidation: ${message}`,
    {
      group: 'meta.k8s.io',
      kind,
      causes: [{ reason: 'FieldValueNotSupported', field: 'fieldValidation', message }],
    },
  );
}

function model(name: string): Model | undefined {
  if (!models) throw new Error('strict field validation before loadFieldModels()');
  const candidate = models[name] as Partial<Model> | undefined;
  return typeof candidate?.getAttributeTypeMap === 'function' ? (candidate as Model) : undefined;
}

/** client-node's name for a built-in kind's definition: V1Deployment, CoreV1Event, RbacV1Subject. */
function modelOf(def: ResourceDef): Model | undefined {
  return (
    model(`${def.version.toUpperCase()[0]}${def.version.slice(1)}${def.kind}`) ??
    model(`CoreV1${def.kind}`)
  );
}

/** The unknown fields of `value` read as the model type `type`, as apimachinery names them. */
function unknownByType(value: unknown, type: string, path: string, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value))
      value.forEach((item, i) => unknownByType(item, array[1] as string, `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    for (const [k, v] of Object.entries(value))
      unknownByType(v, map[1] as string, `${path}[${k}]`, out);
    return;
  }
  const m = model(type);
  if (!m || Array.isArray(value)) return;
  const attributes = m.getAttributeTypeMap();
  for (const [k, v] of Object.entries(value)) {
    const field = path ? `${path}.${k}` : k;
    const attribute = attributes.find((a) => a.baseName === k);
    if (!attribute) out.push(field);
    else unknownByType(v, attribute.type, field, out);
  }
}

type Schema = Record<string, unknown>;

/** The fields a structural schema does not declare: what pruning would drop. */
function unknownBySchema(value: unknown, schema: Schema | undefined, path: string, out: string[]) {
  if (!schema || value === null || typeof value !== 'object') return;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) =>
      unknownBySchema(item, schema.items as Schema | undefined, `${path}[${i}]`, out),
    );
    return;
  }
  const props = schema.properties as Record<string, Schema> | undefined;
  const additional = schema.additionalProperties;
  for (const [k, v] of Object.entries(value)) {
    const field = path ? `${path}.${k}` : k;
    if (props && k in props) unknownBySchema(v, props[k], field, out);
    else if (additional && typeof additional === 'object')
      unknownBySchema(v, additional as Schema, `${path}[${k}]`, out);
    else if (props || additional === false) out.push(field);
  }
}

/**
 * The fields of `obj` its kind does not declare, in apimachinery's notation
 * (`spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem`). `customSchema` is
 * the CRD's openAPIV3Schema for a custom resource.
 */
export function unknownFields(def: ResourceDef, obj: KubeObject, customSchema?: Schema): string[] {
  const out: string[] = [];
  if (def.custom) {
    const props = (customSchema?.properties ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'apiVersion' || k === 'kind') continue;
      if (k === 'metadata') unknownByType(v, 'V1ObjectMeta', 'metadata', out);
      else if (k in props) unknownBySchema(v, props[k], k, out);
      else out.push(k);
    }
    return out;
  }
  const m = modelOf(def);
  if (!m) return out;
  for (const [k, v] of Object.entries(obj)) {
    const attribute = m.getAttributeTypeMap().find((a) => a.baseName === k);
    if (!attribute) out.push(k);
    else unknownByType(v, attribute.type, k, out);
  }
  return out;
}

function strictDecodingError(fields: string[]): string {
  return `strict decoding error: ${fields.map((f) => `unknown field "${f}"`).join(', ')}`;
}

/** The 400 a create or an update with unknown fields gets under Strict. */
export function strictBodyError(def: ResourceDef, fields: string[]): ApiError {
  return errors.badRequest(
    `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${strictDecodingError(fields)}`,
  );
}

/** The 422 a patch whose result has unknown fields gets under Strict. */
export function strictPatchError(patch: unknown, fields: string[]): ApiError {
  const message = `Invalid value: ${JSON.stringify(JSON.stringify(patch))}: ${strictDecodingError(fields)}`;
  return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', field: 'patch', message }],
  });
}
