/**
 * Strict parser for Kubernetes label selectors (k8s.io/apimachinery/pkg/labels). Client input is
 * hostile: anything outside the grammar, or keys/values the API server would reject, throws a
 * SelectorError that the HTTP layer turns into 400 BadRequest.
 */

type LabelOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export class SelectorError extends Error {
  override name = 'SelectorError';
}

const MAX_SELECTOR_LENGTH = 16_384;
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SPECIAL = new Set([' ', '\t', '\n', '\r', '!', ',', '=', '(', ')', '<', '>']);

type Token =
  | { kind: 'id'; text: string }
  | { kind: 'op'; text: '!' | ',' | '=' | '==' | '!=' | '(' | ')' | '<' | '>' }
  | { kind: 'end'; text: '' };

function tokenize(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ kind: 'op', text: two });
      i += 2;
      continue;
    }
    if (SPECIAL.has(c)) {
      out.push({ kind: 'op', text: c as '!' });
      i++;
      continue;
    }
    let j = i;
    while (j < input.length && !SPECIAL.has(input[j] as string)) {
      const code = input.charCodeAt(j);
      if (code < 0x20 || code > 0x7e)
        throw new SelectorError(
          `unable to parse requirement: invalid character in selector at position ${j}`,
        );
      j++;
    }
    out.push({ kind: 'id', text: input.slice(i, j) });
    i = j;
  }
  out.push({ kind: 'end', text: '' });
  return out;
}

export function validateLabelKey(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2)
    return `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined) {
    if (prefix.length === 0) return 'prefix part must be non-empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))
      return `prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`;
  }
  if (!name) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME.test(name))
    return `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
  return undefined;
}

export function validateLabelValue(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!NAME.test(value))
    return `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;
  return undefined;
}

/** Parses a selector string; the empty string selects everything. */
export function parseLabelSelector(input: string): LabelRequirement[] {
  if (input.length > MAX_SELECTOR_LENGTH)
    throw new SelectorError(`label selector is longer than ${MAX_SELECTOR_LENGTH} characters`);
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos] as Token;
  const next = () => tokens[pos++] as Token;
  const fail = (found: Token, expected: string): never => {
    throw new SelectorError(
      `unable to parse requirement: found '${found.text}', expected: ${expected}`,
    );
  };
  const reqs: LabelRequirement[] = [];
  if (peek().kind === 'end') return reqs;

  for (;;) {
    let negate = false;
    if (peek().text === '!' && peek().kind === 'op') {
      next();
      negate = true;
    }
    const keyTok = next();
    if (keyTok.kind !== 'id') fail(keyTok, 'identifier');
    const key = keyTok.text;
    const keyError = validateLabelKey(key);
    if (keyError)
      throw new SelectorError(
        `unable to parse requirement: key: Invalid value: "${key}": ${keyError}`,
      );

    const opTok = peek();
    if (negate) {
      if (opTok.text !== ',' && opTok.kind !== 'end')
        fail(opTok, "',' or end of selector after '!key'");
      reqs.push({ key, operator: '!', values: [] });
    } else if (opTok.kind === 'end' || opTok.text === ',') {
      reqs.push({ key, operator: 'exists', values: [] });
    } else {
      next();
      let operator: LabelOperator;
      let values: string[];
      if (opTok.kind === 'id' && (opTok.text === 'in' || opTok.text === 'notin')) {
        operator = opTok.text;
        const open = next();
        if (open.text !== '(' || open.kind !== 'op') fail(open, "'('");
        values = [];
        for (;;) {
          const t = next();
          if (t.kind === 'op' && t.text === ')' && values.length === 0) {
            throw new SelectorError(
              `unable to parse requirement: for 'in', 'notin' operators, values set can't be empty`,
            );
          }
          if (t.kind === 'id') values.push(t.text);
          else if (t.kind === 'op' && t.text === ',') values.push('');
          else fail(t, 'identifier');
          if (t.kind === 'op' && t.text === ',') continue;
          const sep = next();
          if (sep.kind === 'op' && sep.text === ')') break;
          if (!(sep.kind === 'op' && sep.text === ',')) fail(sep, "',' or ')'");
        }
      } else if (
        opTok.kind === 'op' &&
        (opTok.text === '=' || opTok.text === '==' || opTok.text === '!=')
      ) {
        operator = opTok.text === '!=' ? '!=' : '=';
        const v = peek();
        if (v.kind === 'id') {
          next();
          values = [v.text];
        } else if (v.kind === 'end' || v.text === ',') {
          values = [''];
        } else {
          return fail(v, 'identifier');
        }
      } else if (opTok.kind === 'op' && (opTok.text === '<' || opTok.text === '>')) {
        operator = opTok.text === '<' ? 'lt' : 'gt';
        const v = next();
        if (v.kind !== 'id') fail(v, 'identifier');
        if (!/^-?\d+$/.test(v.text))
          throw new SelectorError(
            `unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`,
          );
        values = [v.text];
      } else {
        return fail(opTok, '=, ==, !=, in, notin, <, >');
      }
      for (const value of values) {
        const valueError = validateLabelValue(value);
        if (valueError)
          throw new SelectorError(
            `unable to parse requirement: values[0][${key}]: Invalid value: "${value}": ${valueError}`,
          );
      }
      reqs.push({ key, operator, values });
    }
    const sep = next();
    if (sep.kind === 'end') break;
    if (!(sep.kind === 'op' && sep.text === ',')) fail(sep, "',' or end of selector");
  }
  return reqs;
}

export function matchesLabels(
  reqs: readonly LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case '=':
        return has && v === r.values[0];
      case '!=':
        return !has || v !== r.values[0];
      case 'in':
        return has && r.values.includes(v as string);
      case 'notin':
        return !has || !r.values.includes(v as string);
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v as string)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        return r.operator === 'gt' ? n > bound : n < bound;
      }
    }
  });
}
