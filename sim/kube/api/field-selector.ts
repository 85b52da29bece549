/**
 * Field selectors: `a=b,c!=d`, with the escapes the real server accepts (`\,` `\=` `\\`). Only
 * the fields the resource supports may be used; others answer 400 like the real server.
 */
import { SelectorError } from './label-selector.js';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export function parseFieldSelector(
  input: string,
  supported: readonly string[],
): FieldRequirement[] {
  if (input.trim() === '') return [];
  if (input.length > 16_384) throw new SelectorError('field selector is too long');
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i] as string;
    if (c === '\\') {
      const n = input[i + 1];
      if (n === undefined || !'\\,='.includes(n))
        throw new SelectorError(`invalid field selector: invalid escape sequence at position ${i}`);
      current += c + n;
      i++;
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((part) => {
    const m = /^(.*?[^\\])(!=|==|=)(.*)$/s.exec(part) ?? /^()(!=|==|=)(.*)$/s.exec(part);
    if (!m) throw new SelectorError(`invalid field selector: '${part}'`);
    const field = (m[1] as string).trim();
    const operator = m[2] === '!=' ? '!=' : '=';
    const rawValue = m[3] as string;
    if (/(^|[^\\])[=!]/.test(rawValue.replace(/\\\\/g, ''))) {
      throw new SelectorError(
        `invalid field selector: '${part}': invalid selector: '${part}'; can't understand '${rawValue}'`,
      );
    }
    if (field === '')
      throw new SelectorError(`invalid field selector: '${part}': missing field name`);
    if (!supported.includes(field)) throw new SelectorError(`field label not supported: ${field}`);
    const value = rawValue.replace(/\\(.)/g, '$1');
    return { field, operator, value };
  });
}

function readField(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}

export function matchesFields(reqs: readonly FieldRequirement[], obj: unknown): boolean {
  return reqs.every((r) => (readField(obj, r.field) === r.value) === (r.operator === '='));
}
