/**
 * The three patch types the API server accepts: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and strategic merge patch for the list fields runner-medic, ARC, kubectl and the
 * models use (containers/conditions/ownerReferences/... merged by key; finalizers as a set).
 */
import { deepClone } from '../types.js';

type Json = unknown;
type JsonObject = Record<string, Json>;

export class PatchError extends Error {
  constructor(
    message: string,
    /** 422 for a failed `test` op or a path that does not exist; 400 for a malformed patch. */
    readonly code: 400 | 422 = 400,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

const isObject = (v: Json): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return deepClone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function walk(
  doc: Json,
  tokens: string[],
  path: string,
): { parent: JsonObject | Json[]; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined)
      throw new PatchError(`doc is missing path: "${path}": missing value`, 422);
  }
  if (!Array.isArray(cur) && !isObject(cur))
    throw new PatchError(`doc is missing path: "${path}": missing value`, 422);
  return { parent: cur, key: tokens[tokens.length - 1] as string };
}

function arrayIndex(arr: Json[], key: string, path: string, forInsert: boolean): number {
  if (key === '-' && forInsert) return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(key))
    throw new PatchError(`invalid array index "${key}" in "${path}"`, 422);
  const i = Number(key);
  if (i > arr.length || (!forInsert && i >= arr.length))
    throw new PatchError(`Unable to access invalid index: ${i}`, 422);
  return i;
}

function getAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const { parent, key } = walk(doc, tokens, path);
  const v = Array.isArray(parent) ? parent[arrayIndex(parent, key, path, false)] : parent[key];
  if (v === undefined) throw new PatchError(`doc is missing key: ${path}: missing value`, 422);
  return v;
}

function removeAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  const { parent, key } = walk(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, path, false), 1)[0];
  if (!(key in parent))
    throw new PatchError(`Unable to remove nonexistent key: ${key}: missing value`, 422);
  const v = parent[key];
  delete parent[key];
  return v;
}

function addAt(doc: Json, path: string, value: Json): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = walk(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, true), 0, value);
  else parent[key] = value;
  return doc;
}

function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

export function jsonPatch(target: Json, patch: Json): Json {
  if (!Array.isArray(patch))
    throw new PatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = deepClone(target);
  for (const raw of patch) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchError('invalid JSON patch operation: each operation needs "op" and "path"');
    }
    const op = raw as unknown as JsonPatchOp;
    switch (op.op) {
      case 'add':
        if (!('value' in raw)) throw new PatchError(`add operation does not apply: missing value`);
        doc = addAt(doc, op.path, deepClone(op.value));
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'replace':
        if (!('value' in raw))
          throw new PatchError(`replace operation does not apply: missing value`);
        if (parsePointer(op.path).length === 0) doc = deepClone(op.value);
        else {
          removeAt(doc, op.path);
          doc = addAt(doc, op.path, deepClone(op.value));
        }
        break;
      case 'move': {
        if (op.from === undefined)
          throw new PatchError('move operation does not apply: missing from');
        const v = removeAt(doc, op.from);
        doc = addAt(doc, op.path, v);
        break;
      }
      case 'copy': {
        if (op.from === undefined)
          throw new PatchError('copy operation does not apply: missing from');
        doc = addAt(doc, op.path, deepClone(getAt(doc, op.from)));
        break;
      }
      case 'test':
        if (!jsonEqual(getAt(doc, op.path), op.value))
          throw new PatchError(`testing value ${op.path} failed: test failed`, 422);
        break;
      default:
        throw new PatchError(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/**
 * Strategic-merge keys for list fields, by field name (the Kubernetes Go struct tags for the
 * types the twin stores). Lists not named here are replaced, as in the real server.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  taints: 'key',
  addresses: 'type',
};
/** Primitive lists merged as sets. */
const SET_LISTS = new Set(['finalizers']);

export function strategicMergePatch(target: Json, patch: Json, field = ''): Json {
  if (!isObject(patch)) return deepClone(patch);
  if (patch.$patch === 'replace') {
    const copy = { ...patch };
    delete copy.$patch;
    return deepClone(copy);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$retainKeys' || k === '$patch') continue;
    if (k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const name = k.slice('$deleteFromPrimitiveList/'.length);
      const current = out[name];
      if (Array.isArray(current) && Array.isArray(v))
        out[name] = current.filter((x) => !v.some((d) => jsonEqual(d, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      out[k] = mergeList(out[k], v, k);
      continue;
    }
    const merged = strategicMergePatch(out[k], v, k);
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  void field;
  return out;
}

function mergeList(target: Json, patch: Json[], field: string): Json[] {
  const current = Array.isArray(target) ? [...target] : [];
  if (SET_LISTS.has(field)) {
    for (const item of patch) if (!current.some((c) => jsonEqual(c, item))) current.push(item);
    return current;
  }
  const key = MERGE_KEYS[field];
  if (!key) {
    if (patch.some((p) => isObject(p) && p.$patch === 'replace'))
      return patch.filter((p) => !(isObject(p) && p.$patch));
    return deepClone(patch);
  }
  if (patch.some((p) => isObject(p) && p.$patch === 'replace')) {
    return deepClone(patch.filter((p) => !(isObject(p) && p.$patch === 'replace')));
  }
  for (const item of patch) {
    if (!isObject(item) || !(key in item))
      throw new PatchError(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`,
      );
    const idx = current.findIndex((c) => isObject(c) && jsonEqual(c[key], item[key]));
    if (item.$patch === 'delete') {
      if (idx >= 0) current.splice(idx, 1);
      continue;
    }
    if (idx >= 0) current[idx] = strategicMergePatch(current[idx], item, field);
    else current.push(strategicMergePatch(undefined, item, field));
  }
  return current;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export function patchTypeFromContentType(contentType: string | undefined): PatchType | undefined {
  const base = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  switch (base) {
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/json-patch+json':
      return 'json';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+json':
      return 'apply';
    default:
      return undefined;
  }
}

export function applyPatch(type: Exclude<PatchType, 'apply'>, target: Json, patch: Json): Json {
  switch (type) {
    case 'merge':
      return mergePatch(target, patch);
    case 'json':
      return jsonPatch(target, patch);
    case 'strategic':
      return strategicMergePatch(target, patch);
  }
}
