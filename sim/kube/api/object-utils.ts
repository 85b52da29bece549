/** Small helpers shared by the API semantics: request bodies, continue tokens, conditions. */
import { deepClone, isoTime, type Condition, type KubeObject, type Pod } from '../types.js';
import { errors, type Target } from './errors.js';
import { apiVersionOf, type ResourceDef } from './resources.js';

export function target(def: ResourceDef, name?: string): Target {
  return { group: def.group, resource: def.plural, name };
}

export function asObject(body: unknown, def: ResourceDef): KubeObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.badRequest(`the body of the request was not a ${def.kind} object`);
  }
  const obj = deepClone(body) as KubeObject;
  const want = apiVersionOf(def);
  if (obj.apiVersion !== undefined && obj.apiVersion !== want) {
    throw errors.badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${want})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== def.kind) {
    throw errors.badRequest(
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${def.kind})`,
    );
  }
  if (obj.metadata !== undefined && (typeof obj.metadata !== 'object' || obj.metadata === null)) {
    throw errors.badRequest('metadata must be an object');
  }
  return obj;
}

export function asLoose(body: unknown): KubeObject | undefined {
  return body && typeof body === 'object' && 'metadata' in body ? (body as KubeObject) : undefined;
}

export function immutablePodFields(existing: Pod, next: Pod, def: ResourceDef): void {
  const a = existing.spec;
  const b = next.spec;
  const nameChanged = a.nodeName !== undefined && b.nodeName !== a.nodeName;
  const containersChanged =
    JSON.stringify(a.containers.map((c) => ({ ...c, image: undefined }))) !==
    JSON.stringify(b.containers?.map((c) => ({ ...c, image: undefined })));
  if (nameChanged || containersChanged) {
    throw errors.invalid(target(def, existing.metadata.name), 'Pod', [
      {
        reason: 'FieldValueForbidden',
        field: 'spec',
        message:
          'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      },
    ]);
  }
}

export function withoutMetaStatus(o: KubeObject): unknown {
  const rest: Record<string, unknown> = { ...o };
  delete rest.metadata;
  delete rest.status;
  return rest;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function keyFor(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

export function encodeContinue(token: { rv: number; start: string }): string {
  return Buffer.from(
    JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start }),
  ).toString('base64url');
}

export function decodeContinue(raw: string): { rv: number; start: string } {
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as {
      v?: string;
      rv?: number;
      start?: string;
    };
    if (t.v !== 'meta.k8s.io/v1' || typeof t.rv !== 'number' || typeof t.start !== 'string')
      throw new Error('bad token');
    return { rv: t.rv, start: t.start };
  } catch {
    throw errors.badRequest('continue key is not valid: invalid continue token');
  }
}

/** Sets or replaces a condition by type, keeping lastTransitionTime when the status is unchanged. */
export function setCondition(
  obj: { status?: { conditions?: Condition[] } | Record<string, unknown> },
  condition: Condition,
  now: number,
): void {
  const status = (obj.status ??= {}) as { conditions?: Condition[] };
  const list = (status.conditions ??= []);
  const idx = list.findIndex((c) => c.type === condition.type);
  const prev = idx >= 0 ? list[idx] : undefined;
  const next: Condition = {
    ...condition,
    lastProbeTime: condition.lastProbeTime ?? null,
    lastTransitionTime:
      prev && prev.status === condition.status ? (prev.lastTransitionTime as string) : isoTime(now),
  };
  if (idx >= 0) list[idx] = next;
  else list.push(next);
}

/** The pod condition that says who is disrupting it and why (DisruptionTarget, status True). */
export function setDisruptionTarget(
  pod: { status?: { conditions?: Condition[] } | Record<string, unknown> },
  reason: string,
  message: string,
  now: number,
): void {
  setCondition(pod, { type: 'DisruptionTarget', status: 'True', reason, message }, now);
}
