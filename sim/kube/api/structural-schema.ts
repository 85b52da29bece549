/**
 * Validates an object against a CRD's structural openAPIV3Schema by walking the schema along the
 * object, as the API server does: apiextensions-apiserver hands the schema to kube-openapi's
 * validator (k8s.io/kube-openapi/pkg/validation/validate), which interprets it and compiles
 * nothing. The cost follows the object, not the schema: ARC's CRDs embed the whole PodSpec (some
 * 5,000 typed nodes), which a compiling validator pays for in every process before its first write.
 *
 * Only the keywords a structural schema may hold are known (type, properties, required,
 * additionalProperties, items, format, pattern, enum, bounds of numbers, lengths and items, and
 * anyOf as x-kubernetes-int-or-string uses it); `x-kubernetes-*`, `default` and `description`
 * change nothing here. Pruning comes first (validation.ts), so an unknown field is never seen.
 */

export type Schema = Record<string, unknown>;

/** One way an object breaks its schema, at a field path (`spec.template.spec.containers[0]`). */
export type SchemaViolation =
  | { field: string; keyword: 'required' }
  | { field: string; keyword: 'type'; type: string; value: unknown }
  | { field: string; keyword: 'enum'; allowed: unknown[]; value: unknown }
  | { field: string; keyword: 'other'; message: string; value: unknown };

/** Every violation of `schema` by `value` (none: it conforms). */
export function schemaViolations(value: unknown, schema: Schema): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  check(value, schema, '', out);
  return out;
}

const patterns = new Map<string, RegExp>();
const patternOf = (source: string): RegExp => {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'u')));
  return re;
};

const childField = (field: string, key: string) => (field ? `${field}.${key}` : key);

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

// RFC 3339 date-time, as OpenAPI's `date-time` format (and Kubernetes' metav1.Time) writes it.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(\.\d+)?([Zz]|[+-]\d\d(:?\d\d)?)$/;

function validDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= days;
}

/** Formats ARC's CRDs use; kube-openapi, like this walk, passes a format it does not know. */
function formatHolds(format: string, value: unknown): boolean {
  if (format === 'date-time') return typeof value !== 'string' || validDateTime(value);
  if (typeof value !== 'number') return true;
  if (format === 'int32') return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31;
  if (format === 'int64') return Number.isInteger(value);
  return true;
}

function check(value: unknown, schema: Schema, field: string, out: SchemaViolation[]): void {
  const type = typeof schema.type === 'string' ? schema.type : undefined;
  if (type !== undefined && !typeMatches(type, value))
    out.push({ field, keyword: 'type', type, value });
  // The value's own kind picks the keywords that apply, whatever type the schema declares: a
  // 1.5 where an int32 goes is neither an integer nor in its format.
  checkValue(value, schema, field, out);
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value))
    out.push({ field, keyword: 'enum', allowed: schema.enum, value });
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as Schema[]).map((branch) => {
      const found: SchemaViolation[] = [];
      check(value, branch, field, found);
      return found;
    });
    // None holds: what each branch found is the cause (an int-or-string gets both types).
    if (!branches.some((b) => b.length === 0)) for (const b of branches) out.push(...b);
  }
}

/** The keywords that apply to a value of this kind (a number's bounds, a string's pattern, …). */
function checkValue(value: unknown, schema: Schema, field: string, out: SchemaViolation[]): void {
  const other = (message: string) => out.push({ field, keyword: 'other', message, value });
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      other(`must be >= ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      other(`must be <= ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength)
      other(`must NOT have fewer than ${schema.minLength} characters`);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength)
      other(`must NOT have more than ${schema.maxLength} characters`);
    if (typeof schema.pattern === 'string' && !patternOf(schema.pattern).test(value))
      other(`must match pattern "${schema.pattern}"`);
  }
  if (typeof schema.format === 'string' && !formatHolds(schema.format, value))
    other(`must match format "${schema.format}"`);
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      other(`must NOT have fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      other(`must NOT have more than ${schema.maxItems} items`);
    const items = schema.items as Schema | undefined;
    if (items) value.forEach((item, i) => check(item, items, `${field}[${i}]`, out));
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    checkObject(value as Record<string, unknown>, schema, field, out);
}

function checkObject(
  value: Record<string, unknown>,
  schema: Schema,
  field: string,
  out: SchemaViolation[],
): void {
  for (const name of (schema.required as string[] | undefined) ?? [])
    if (value[name] === undefined)
      out.push({ field: childField(field, name), keyword: 'required' });
  const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const additional = schema.additionalProperties;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const declared = Object.hasOwn(props, key) ? props[key] : undefined;
    if (declared) check(v, declared, childField(field, key), out);
    else if (additional && typeof additional === 'object')
      check(v, additional as Schema, childField(field, key), out);
  }
}
