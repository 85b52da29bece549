/**
 * OpenAPI v3 discovery (`GET /openapi/v3`, then one document per group-version,
 * https://kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-v3), as far as kubectl
 * reads it. kubectl 1.27+ fetches it before `create` and `apply` (with its default
 * `--validate=strict`) and fails with "failed to download openapi" when it cannot:
 * - k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go looks for the PATCH operation
 *   whose `x-kubernetes-group-version-kind` is the object's kind, and for a `fieldValidation`
 *   parameter on it. Found, kubectl leaves validation to the server and sends
 *   `fieldValidation=Strict` (field-validation.ts).
 * - k8s.io/kubectl/pkg/cmd/apply/patcher.go reads the PATCH operation's request body types to
 *   choose a strategic merge patch. It also looks in `components.schemas` for the kind's schema
 *   (its merge keys); the twin serves the list empty, so kubectl finds none and computes the patch
 *   from its compiled-in types (buildStrategicMergeFromBuiltins), with the same merge keys. An
 *   absent `components` would print "error calculating patch from openapi v3 spec" on each
 *   re-apply, which a real server never causes.
 *
 * The root lists each group-version with a `serverRelativeURL` that carries a hash of the
 * document, as the real server's does (clients cache by it). Server-side apply is not simulated,
 * so `application/apply-patch+yaml` is not offered; custom resources take no strategic merge
 * patch, as on the real server.
 */
import { createHash } from 'node:crypto';
import { RESOURCES, apiVersionOf, type ResourceDef } from './resources.js';

type Operation = Record<string, unknown>;

const WRITE_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation'].map((name) => ({
  name,
  in: 'query',
  schema: { type: 'string', uniqueItems: true },
}));

/** `/api/v1` or `/apis/apps/v1`, without the leading slash: the root's keys. */
function groupVersionPath(def: ResourceDef): string {
  return def.group ? `apis/${def.group}/${def.version}` : `api/${def.version}`;
}

function patchTypes(def: ResourceDef): string[] {
  return [
    'application/json-patch+json',
    'application/merge-patch+json',
    ...(def.custom ? [] : ['application/strategic-merge-patch+json']),
  ];
}

function operation(def: ResourceDef, action: string, extra: Operation = {}): Operation {
  return {
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: def.group, version: def.version, kind: def.kind },
    ...extra,
  };
}

function paths(def: ResourceDef): Record<string, Record<string, Operation>> {
  const base = `/${groupVersionPath(def)}`;
  const collection = def.namespaced
    ? `${base}/namespaces/{namespace}/${def.plural}`
    : `${base}/${def.plural}`;
  const post = operation(def, 'post', { parameters: WRITE_PARAMETERS });
  if (def.review) return { [collection]: { post } };
  const item = {
    get: operation(def, 'get'),
    put: operation(def, 'put', { parameters: WRITE_PARAMETERS }),
    patch: operation(def, 'patch', {
      parameters: [
        ...WRITE_PARAMETERS,
        { name: 'force', in: 'query', schema: { type: 'boolean' } },
      ],
      requestBody: {
        required: true,
        content: Object.fromEntries(patchTypes(def).map((type) => [type, { schema: {} }])),
      },
    }),
    delete: operation(def, 'delete', { parameters: WRITE_PARAMETERS.slice(0, 1) }),
  };
  const out: Record<string, Record<string, Operation>> = {
    [collection]: { get: operation(def, 'list'), post },
    [`${collection}/{name}`]: item,
  };
  if (def.subresources.includes('status'))
    out[`${collection}/{name}/status`] = { get: item.get, put: item.put, patch: item.patch };
  return out;
}

function groupVersionDocument(apiVersion: string): unknown {
  const defs = RESOURCES.filter((r) => apiVersionOf(r) === apiVersion);
  if (defs.length === 0) return undefined;
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths: Object.assign({}, ...defs.map(paths)),
    components: { schemas: {} },
  };
}

function hash(document: unknown): string {
  return createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase();
}

/** The body for `/openapi/v3` or `/openapi/v3/<group-version path>`, or undefined for 404. */
export function openApiV3(path: string): unknown {
  if (path === '/openapi/v3') {
    const keys = [...new Set(RESOURCES.map(groupVersionPath))];
    return {
      paths: Object.fromEntries(
        keys.map((key) => [
          key,
          { serverRelativeURL: `/openapi/v3/${key}?hash=${hash(documentAt(key))}` },
        ]),
      ),
    };
  }
  const key = /^\/openapi\/v3\/(.+)$/.exec(path)?.[1];
  return key === undefined ? undefined : documentAt(key);
}

function documentAt(key: string): unknown {
  const core = /^api\/([^/]+)$/.exec(key);
  if (core) return groupVersionDocument(core[1] as string);
  const grouped = /^apis\/([^/]+)\/([^/]+)$/.exec(key);
  return grouped ? groupVersionDocument(`${grouped[1]}/${grouped[2]}`) : undefined;
}
