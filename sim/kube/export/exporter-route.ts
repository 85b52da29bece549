/**
 * kubernetes-event-exporter's `route` (resmoio/kubernetes-event-exporter, pkg/exporter/route.go
 * and rule.go), applied to an enhanced event the way the Go exporter applies it:
 *
 * - A route first runs its `drop` rules: if any matches, the event leaves this route and all its
 *   sub-routes.
 * - Then every `match` rule is tried, independently: each one that matches sends the event to its
 *   `receiver` (if it names one). Two matching rules with the same receiver send it twice.
 * - Only if every `match` rule matched (or there are none) do the sub-`routes` see the event.
 * - A rule matches when each field it sets matches, as an UNANCHORED Go regular expression
 *   (`regexp.MatchString`; a pattern that does not compile matches nothing): `message`,
 *   `apiVersion`/`kind` of the involved object, `namespace` OF THE EVENT (metadata.namespace;
 *   node events live in `default`), `reason`, `type`, `component`/`host` of the event source.
 *   `labels`/`annotations` are about the involved object (from the exporter's lookup): each key
 *   must be present and its value must match. `minCount`: `count >= minCount`.
 *
 * The config is YAML read by goccy/go-yaml after `os.ExpandEnv` (main.go): keys are the Go field
 * names lowercased (`kind`, `minCount`/`apiVersion` by tag), unknown keys are ignored, and a YAML
 * boolean given where a string is expected becomes `true`/`false` (so quote `"True"`).
 */
import { parse as parseYaml } from 'yaml';
import { compileGoRegexp, goMatchString, GoRegexpSyntaxError } from './go-regexp.js';

export interface ExporterRule {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  message?: string;
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  reason?: string;
  type?: string;
  minCount?: number;
  component?: string;
  host?: string;
  receiver?: string;
}

export interface ExporterRoute {
  drop: ExporterRule[];
  match: ExporterRule[];
  routes: ExporterRoute[];
}

/** The fields of the exporter's EnhancedEvent (its JSON, as the EventBridge sink sends it) a rule reads. */
export interface RoutableEvent {
  metadata?: { namespace?: string | null } | null;
  message?: string | null;
  reason?: string | null;
  type?: string | null;
  count?: number | null;
  source?: { component?: string | null; host?: string | null } | null;
  involvedObject?: {
    apiVersion?: string | null;
    kind?: string | null;
    labels?: Record<string, string> | null;
    annotations?: Record<string, string> | null;
  } | null;
}

export interface ExporterConfig {
  route: ExporterRoute;
  /** The whole config after env expansion, as parsed (receivers, clusterName, …). */
  raw: Record<string, unknown>;
  /** Keys the Go exporter would silently ignore (a typo such as `Reason:` or `matches:`). */
  ignoredKeys: string[];
  /** Patterns Go cannot compile: such a rule never matches. */
  invalidPatterns: { path: string; pattern: string; error: string }[];
}

const RULE_STRING_KEYS = [
  'message',
  'apiVersion',
  'kind',
  'namespace',
  'reason',
  'type',
  'component',
  'host',
  'receiver',
] as const;
const RULE_MAP_KEYS = ['labels', 'annotations'] as const;
const RULE_KEYS = new Set<string>([...RULE_STRING_KEYS, ...RULE_MAP_KEYS, 'minCount']);
const ROUTE_KEYS = new Set(['drop', 'match', 'routes']);

/** Go's `os.ExpandEnv`: `$NAME` and `${NAME}` become the variable (empty when unset). */
export function expandEnv(text: string, env: Record<string, string | undefined>): string {
  let out = '';
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    if (c !== '$' || j + 1 >= text.length) {
      out += c;
      continue;
    }
    const { name, width } = shellName(text.slice(j + 1));
    if (name === '' && width > 0) {
      // Go eats bad syntax such as `${}` or an unclosed `${`.
    } else if (name === '') out += '$';
    else out += env[name] ?? '';
    j += width;
  }
  return out;
}

const SPECIAL = /^[*#$@!?\-0-9]$/;

function shellName(s: string): { name: string; width: number } {
  const [first = '', second = '', third = ''] = s;
  if (first === '{') {
    if (SPECIAL.test(second) && third === '}') return { name: second, width: 3 };
    const close = s.indexOf('}', 1);
    if (close === 1) return { name: '', width: 2 };
    if (close < 0) return { name: '', width: 1 };
    return { name: s.slice(1, close), width: close + 1 };
  }
  if (SPECIAL.test(first)) return { name: first, width: 1 };
  const name = /^[A-Za-z0-9_]*/.exec(s)?.[0] ?? '';
  return { name, width: name.length };
}

/** Parse the exporter's config.yaml as the Go binary does (env expansion, then YAML). */
export function parseExporterConfig(
  yamlText: string,
  env: Record<string, string | undefined> = {},
): ExporterConfig {
  const raw: unknown = parseYaml(expandEnv(yamlText, env));
  if (!isObject(raw)) throw new Error('exporter config: the top level must be a mapping');
  const ignoredKeys: string[] = [];
  const route = readRoute(raw['route'] ?? {}, 'route', ignoredKeys);
  return { route, raw, ignoredKeys, invalidPatterns: invalidPatterns(route, 'route') };
}

/** A `route:` value (already parsed from YAML or written as an object) as an ExporterRoute. */
export function parseExporterRoute(raw: unknown): ExporterRoute {
  return readRoute(raw ?? {}, 'route', []);
}

function readRoute(raw: unknown, path: string, ignored: string[]): ExporterRoute {
  if (raw === null) return { drop: [], match: [], routes: [] };
  if (!isObject(raw)) throw new Error(`exporter config: ${path} must be a mapping`);
  for (const key of Object.keys(raw)) if (!ROUTE_KEYS.has(key)) ignored.push(`${path}.${key}`);
  const list = (key: string): unknown[] => {
    const v = raw[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new Error(`exporter config: ${path}.${key} must be a list`);
    return v;
  };
  return {
    drop: list('drop').map((r, i) => readRule(r, `${path}.drop[${i}]`, ignored)),
    match: list('match').map((r, i) => readRule(r, `${path}.match[${i}]`, ignored)),
    routes: list('routes').map((r, i) => readRoute(r, `${path}.routes[${i}]`, ignored)),
  };
}

function readRule(raw: unknown, path: string, ignored: string[]): ExporterRule {
  if (raw === null) return {};
  if (!isObject(raw)) throw new Error(`exporter config: ${path} must be a mapping`);
  const rule: ExporterRule = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!RULE_KEYS.has(key)) {
      ignored.push(`${path}.${key}`);
      continue;
    }
    if (value === null || value === undefined) continue;
    if (key === 'minCount') {
      if (typeof value !== 'number' || !Number.isInteger(value))
        throw new Error(`exporter config: ${path}.minCount must be an integer`);
      rule.minCount = value;
    } else if (key === 'labels' || key === 'annotations') {
      if (!isObject(value)) throw new Error(`exporter config: ${path}.${key} must be a mapping`);
      rule[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, goString(v, `${path}.${key}.${k}`)]),
      );
    } else {
      rule[key as (typeof RULE_STRING_KEYS)[number]] = goString(value, `${path}.${key}`);
    }
  }
  return rule;
}

/** A YAML scalar decoded into a Go string field. */
function goString(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`exporter config: ${path} must be a string`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalidPatterns(route: ExporterRoute, path: string): ExporterConfig['invalidPatterns'] {
  const out: ExporterConfig['invalidPatterns'] = [];
  const check = (pattern: string, where: string) => {
    try {
      compileGoRegexp(pattern);
    } catch (e) {
      if (!(e instanceof GoRegexpSyntaxError)) throw e;
      out.push({ path: where, pattern, error: e.message });
    }
  };
  const rules = (list: ExporterRule[], kind: string) =>
    list.forEach((rule, i) => {
      const at = `${path}.${kind}[${i}]`;
      for (const key of RULE_STRING_KEYS)
        if (key !== 'receiver' && rule[key]) check(rule[key], `${at}.${key}`);
      for (const key of RULE_MAP_KEYS)
        for (const [k, v] of Object.entries(rule[key] ?? {})) check(v, `${at}.${key}.${k}`);
    });
  rules(route.drop, 'drop');
  rules(route.match, 'match');
  route.routes.forEach((sub, i) => out.push(...invalidPatterns(sub, `${path}.routes[${i}]`)));
  return out;
}

/** rule.go `MatchesEvent`. */
export function ruleMatches(rule: ExporterRule, event: RoutableEvent): boolean {
  const io = event.involvedObject ?? {};
  const fields: [string | undefined, string | null | undefined][] = [
    [rule.message, event.message],
    [rule.apiVersion, io.apiVersion],
    [rule.kind, io.kind],
    [rule.namespace, event.metadata?.namespace],
    [rule.reason, event.reason],
    [rule.type, event.type],
    [rule.component, event.source?.component],
    [rule.host, event.source?.host],
  ];
  for (const [pattern, value] of fields)
    if (pattern && !goMatchString(pattern, value ?? '')) return false;
  for (const [want, have] of [
    [rule.labels, io.labels],
    [rule.annotations, io.annotations],
  ] as const) {
    for (const [key, pattern] of Object.entries(want ?? {})) {
      const value = have?.[key];
      if (value === undefined || value === null || !goMatchString(pattern, value)) return false;
    }
  }
  return (event.count ?? 0) >= (rule.minCount ?? 0);
}

/**
 * route.go `ProcessEvent`: the receivers the event is sent to, in order, one entry per send
 * (a receiver appears twice when two matching rules name it).
 */
export function routeEvent(route: ExporterRoute, event: RoutableEvent): string[] {
  const sent: string[] = [];
  process(route, event, sent);
  return sent;
}

function process(route: ExporterRoute, event: RoutableEvent, sent: string[]): void {
  if (route.drop.some((rule) => ruleMatches(rule, event))) return;
  let matchesAll = true;
  for (const rule of route.match) {
    if (ruleMatches(rule, event)) {
      if (rule.receiver) sent.push(rule.receiver);
    } else matchesAll = false;
  }
  if (matchesAll) for (const sub of route.routes) process(sub, event, sent);
}
