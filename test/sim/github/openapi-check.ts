import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** GitHub's own OpenAPI description of api.github.com (@octokit/openapi), for checking the twin. */
interface OpenApi {
  info: { version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
const spec = require('@octokit/openapi/generated/api.github.com.json') as OpenApi;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
ajv.addSchema({ $id: 'github', components: spec.components });

const pointTo = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/', '"github#/components/'));

function resolve(node: unknown): Record<string, unknown> | undefined {
  const object = node as Record<string, unknown> | undefined;
  const ref = object?.['$ref'];
  if (typeof ref !== 'string') return object;
  const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
  return resolve(spec.components[section ?? '']?.[name ?? '']);
}

/**
 * A validator for one response of one operation, or undefined when the description has no schema
 * for it (an endpoint or a status newer than the description).
 */
export function responseValidator(
  path: string,
  method: 'get' | 'post' | 'delete',
  status: number,
): ValidateFunction | undefined {
  const response = resolve(spec.paths[path]?.[method]?.responses[String(status)]);
  const content = response?.['content'] as
    Record<string, { schema?: unknown } | undefined> | undefined;
  const schema = content?.['application/json']?.schema;
  return schema === undefined ? undefined : ajv.compile(pointTo(schema) as object);
}

/** GitHub's generic error body (`basic-error`), for statuses an operation does not describe. */
export const basicError = ajv.compile({ $ref: 'github#/components/schemas/basic-error' });

export const hasPath = (path: string): boolean => spec.paths[path] !== undefined;
