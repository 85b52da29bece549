/**
 * EventBridge's event-pattern language, as documented in the EventBridge User Guide ("Amazon
 * EventBridge event patterns" and "Content filtering in Amazon EventBridge event patterns"):
 *
 * - A pattern is an object whose keys name fields of the event; nested objects go down the
 *   event's objects; every key must match (AND).
 * - A leaf is an array of matchers; the field matches if ANY matcher matches (OR). When the event's
 *   value is an array, the field matches if any of its elements matches.
 * - Matchers: a literal (string, number, boolean, null: exact, case-sensitive; numbers by value),
 *   `{prefix}`, `{suffix}` (each also `{prefix|suffix: {equals-ignore-case}}`),
 *   `{equals-ignore-case}`, `{wildcard}` (`*` any run of characters, `\*` a star, `\\` a
 *   backslash), `{numeric: [op, n (, op, n)]}` with ops = < <= > >=, `{exists: bool}`, and
 *   `{anything-but: literal | [literals] | {prefix} | {suffix} | {equals-ignore-case} | {wildcard}}`.
 * - `$or: [pattern, …]` in an object: the object matches when its other keys match and any one of
 *   the alternatives does.
 * - A field the pattern names but the event lacks matches nothing, except `{exists: false}`.
 *   `exists` applies to leaves only.
 * - Where the event has an array of objects, the nested pattern must match within one element.
 *
 * An invalid pattern throws EventPatternError (as PutRule rejects it); `cidr` is not modelled.
 */

export class EventPatternError extends Error {
  constructor(message: string) {
    super(`invalid event pattern: ${message}`);
    this.name = 'EventPatternError';
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const ABSENT = Symbol('absent');
type Value = Json | typeof ABSENT;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the event (an EventBridge event, as JSON) matches the pattern. */
export function matchesEventPattern(pattern: unknown, event: unknown): boolean {
  validateEventPattern(pattern);
  return matchObject(pattern as Record<string, unknown>, event as Value);
}

/** Throws EventPatternError when EventBridge would refuse the pattern. */
export function validateEventPattern(pattern: unknown): void {
  if (!isObject(pattern)) throw new EventPatternError('a pattern is a JSON object');
  validateObject(pattern, '');
}

function validateObject(pattern: Record<string, unknown>, path: string): void {
  for (const [key, sub] of Object.entries(pattern)) {
    const at = path ? `${path}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(sub) || sub.length < 2)
        throw new EventPatternError(`${at} needs an array of at least two patterns`);
      for (const alt of sub) {
        if (!isObject(alt)) throw new EventPatternError(`${at} holds objects only`);
        validateObject(alt, at);
      }
    } else if (Array.isArray(sub)) {
      if (sub.length === 0) throw new EventPatternError(`${at}: empty array matches nothing`);
      for (const m of sub) validateMatcher(m, at);
    } else if (isObject(sub)) validateObject(sub, at);
    else throw new EventPatternError(`${at}: match values must be inside an array`);
  }
}

function validateMatcher(m: unknown, at: string): void {
  if (m === null || typeof m === 'string' || typeof m === 'boolean') return;
  if (typeof m === 'number') {
    if (!Number.isFinite(m)) throw new EventPatternError(`${at}: not a finite number`);
    return;
  }
  if (!isObject(m)) throw new EventPatternError(`${at}: arrays cannot nest`);
  const keys = Object.keys(m);
  if (keys.length !== 1) throw new EventPatternError(`${at}: a matcher has exactly one key`);
  const [op] = keys as [string];
  const arg = m[op];
  switch (op) {
    case 'prefix':
    case 'suffix':
      if (typeof arg === 'string') return;
      if (isObject(arg) && Object.keys(arg).join() === 'equals-ignore-case') {
        if (typeof arg['equals-ignore-case'] === 'string') return;
      }
      throw new EventPatternError(`${at}: ${op} takes a string`);
    case 'equals-ignore-case':
      if (typeof arg !== 'string') throw new EventPatternError(`${at}: ${op} takes a string`);
      return;
    case 'wildcard':
      if (typeof arg !== 'string') throw new EventPatternError(`${at}: wildcard takes a string`);
      if (/(^|[^\\])\*\*/.test(arg))
        throw new EventPatternError(`${at}: consecutive wildcard characters`);
      return;
    case 'exists':
      if (typeof arg !== 'boolean') throw new EventPatternError(`${at}: exists takes a boolean`);
      return;
    case 'numeric':
      numericTests(arg, at);
      return;
    case 'anything-but':
      validateAnythingBut(arg, at);
      return;
    default:
      throw new EventPatternError(`${at}: unsupported matcher ${op}`);
  }
}

function validateAnythingBut(arg: unknown, at: string): void {
  const literal = (v: unknown) => typeof v === 'string' || typeof v === 'number';
  if (literal(arg)) return;
  if (Array.isArray(arg)) {
    if (arg.length === 0 || !arg.every(literal))
      throw new EventPatternError(`${at}: anything-but takes strings or numbers`);
    return;
  }
  if (isObject(arg) && Object.keys(arg).length === 1) {
    const [op] = Object.keys(arg) as [string];
    const v = arg[op];
    if ((op === 'prefix' || op === 'suffix') && typeof v === 'string') return;
    if (
      (op === 'equals-ignore-case' || op === 'wildcard') &&
      (typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')))
    )
      return;
  }
  throw new EventPatternError(`${at}: unsupported anything-but`);
}

type NumericTest = (n: number) => boolean;

function numericTests(arg: unknown, at: string): NumericTest[] {
  if (!Array.isArray(arg) || (arg.length !== 2 && arg.length !== 4))
    throw new EventPatternError(`${at}: numeric takes [op, n] or [op, n, op, n]`);
  const tests: NumericTest[] = [];
  for (let i = 0; i < arg.length; i += 2) {
    const op: unknown = arg[i];
    const n: unknown = arg[i + 1];
    if (typeof n !== 'number' || !Number.isFinite(n))
      throw new EventPatternError(`${at}: numeric bound must be a number`);
    switch (op) {
      case '=':
        tests.push((x) => x === n);
        break;
      case '<':
        tests.push((x) => x < n);
        break;
      case '<=':
        tests.push((x) => x <= n);
        break;
      case '>':
        tests.push((x) => x > n);
        break;
      case '>=':
        tests.push((x) => x >= n);
        break;
      default:
        throw new EventPatternError(`${at}: unknown numeric operator ${String(op)}`);
    }
  }
  if (tests.length === 2) {
    const [first, second] = [arg[0] as string, arg[2] as string];
    const lower = (o: string) => o === '>' || o === '>=';
    const upper = (o: string) => o === '<' || o === '<=';
    if (!(lower(first) && upper(second)))
      throw new EventPatternError(`${at}: a numeric range is a lower bound then an upper bound`);
  }
  return tests;
}

function field(event: Value, key: string): Value {
  return isObject(event) && Object.hasOwn(event, key) ? (event[key] as Json) : ABSENT;
}

function matchObject(pattern: Record<string, unknown>, event: Value): boolean {
  // Where the event holds an array of objects, one element must match the whole sub-pattern.
  if (Array.isArray(event)) return event.some((element) => matchObject(pattern, element));
  for (const [key, sub] of Object.entries(pattern)) {
    if (key === '$or') {
      if (!(sub as Record<string, unknown>[]).some((alt) => matchObject(alt, event))) return false;
      continue;
    }
    const value = field(event, key);
    if (Array.isArray(sub)) {
      if (!matchLeaf(sub as unknown[], value)) return false;
    } else if (value === ABSENT || !matchObject(sub as Record<string, unknown>, value)) {
      return false;
    }
  }
  return true;
}

function matchLeaf(matchers: unknown[], value: Value): boolean {
  return matchers.some((m) => {
    if (isObject(m) && 'exists' in m) {
      const present = value !== ABSENT && !isObject(value);
      return m['exists'] === present;
    }
    if (value === ABSENT) return false;
    const candidates: Json[] = Array.isArray(value) ? value : [value];
    return candidates.some((v) => matchOne(m, v));
  });
}

function matchOne(m: unknown, v: Json): boolean {
  if (!isObject(m)) return literalEquals(m, v);
  const [op] = Object.keys(m) as [string];
  const arg = m[op];
  switch (op) {
    case 'prefix':
    case 'suffix': {
      if (typeof v !== 'string') return false;
      const ignoreCase = isObject(arg);
      const text = ignoreCase ? (arg['equals-ignore-case'] as string) : (arg as string);
      const [a, b] = ignoreCase ? [fold(v), fold(text)] : [v, text];
      return op === 'prefix' ? a.startsWith(b) : a.endsWith(b);
    }
    case 'equals-ignore-case':
      return typeof v === 'string' && fold(v) === fold(arg as string);
    case 'wildcard':
      return typeof v === 'string' && wildcardRegExp(arg as string).test(v);
    case 'numeric':
      return typeof v === 'number' && numericTests(arg, '').every((t) => t(v));
    case 'anything-but':
      return anythingBut(arg, v);
    default:
      return false;
  }
}

function anythingBut(arg: unknown, v: Json): boolean {
  if (typeof arg === 'string' || typeof arg === 'number') return !literalEquals(arg, v);
  if (Array.isArray(arg)) return !arg.some((x) => literalEquals(x, v));
  const [op] = Object.keys(arg as object) as [string];
  const inner = (arg as Record<string, unknown>)[op];
  if (typeof v !== 'string') return op !== 'prefix' && op !== 'suffix';
  const list = (Array.isArray(inner) ? inner : [inner]) as string[];
  switch (op) {
    case 'prefix':
      return !v.startsWith(inner as string);
    case 'suffix':
      return !v.endsWith(inner as string);
    case 'equals-ignore-case':
      return !list.some((x) => fold(x) === fold(v));
    default:
      return !list.some((x) => wildcardRegExp(x).test(v));
  }
}

function literalEquals(m: unknown, v: Json): boolean {
  if (typeof m === 'number') return typeof v === 'number' && m === v;
  return m === v;
}

/** equals-ignore-case compares case-folded text. */
const fold = (s: string): string => s.toLowerCase();

function wildcardRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) {
      source += `\\${pattern[++i] as string}`;
    } else if (c === '*') source += '[\\s\\S]*';
    else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
