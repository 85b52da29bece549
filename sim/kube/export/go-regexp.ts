/**
 * Go's `regexp` (RE2 syntax) for JavaScript: `compileGoRegexp` parses a pattern with Go's rules
 * (golang.org/src/regexp/syntax/parse.go, "Perl" flags as `regexp.Compile` sets them) and emits an
 * equivalent JavaScript RegExp (`v` flag). `goMatchString` is Go's `regexp.MatchString` as
 * kubernetes-event-exporter calls it (pkg/exporter/rule.go `matchString`): unanchored, and a
 * pattern that does not compile matches nothing (the exporter drops the error).
 *
 * Where the two engines differ, the emitted JavaScript spells out Go's meaning:
 * - `.` is any character but `\n` (JavaScript also stops at `\r`, U+2028, U+2029);
 * - `\s` is `[\t\n\f\r ]` and `\w`/`\d` are ASCII (JavaScript's `\s` is Unicode);
 * - `^`/`$` are text anchors unless `(?m)`, and `\A`/`\z` always are;
 * - flags `(?i)`, `(?s)`, `(?m)` apply from where they appear to the end of the enclosing group,
 *   across `|`; `(?U)` only changes which match is found, never whether one is;
 * - what RE2 refuses (look-around, back-references, `a**`, repeat counts over 1000, `\Z`, …) is
 *   an error, even where JavaScript would accept it; `{` that does not start a repeat is literal.
 * Only whether a match exists is modelled; capture positions are not.
 */

export class GoRegexpSyntaxError extends Error {
  constructor(
    message: string,
    readonly pattern: string,
  ) {
    super(`error parsing regexp: ${message} in \`${pattern}\``);
    this.name = 'GoRegexpSyntaxError';
  }
}

interface Flags {
  /** (?i) case-insensitive */
  i: boolean;
  /** (?m) ^ and $ match at line breaks */
  m: boolean;
  /** (?s) . matches \n */
  s: boolean;
}

/** A parsed atom, already in JavaScript syntax; `quantifiable` is false for pseudo-ops. */
interface Piece {
  js: string;
}

const MAX_REPEAT = 1000;

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\u{0}-\\u{7F}',
  blank: '\\u{9}\\u{20}',
  cntrl: '\\u{0}-\\u{1F}\\u{7F}',
  digit: '0-9',
  graph: '\\u{21}-\\u{7E}',
  lower: 'a-z',
  print: '\\u{20}-\\u{7E}',
  punct: '\\u{21}-\\u{2F}\\u{3A}-\\u{40}\\u{5B}-\\u{60}\\u{7B}-\\u{7E}',
  space: '\\u{9}-\\u{D}\\u{20}',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Go's Perl classes (ASCII only), as class contents. */
const PERL_CLASSES: Record<string, string> = {
  d: '0-9',
  s: '\\u{9}\\u{A}\\u{C}\\u{D}\\u{20}',
  w: '0-9A-Za-z_',
};

const SIMPLE_ESCAPES: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };

const cp = (c: number): string => `\\u{${c.toString(16).toUpperCase()}}`;

/** The code point of a one-character string. */
const code = (c: string): number => c.codePointAt(0) ?? 0;

const isAsciiAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);

/** Unicode general categories Go knows by short name (`\pL`, `\p{Lu}`); other names are scripts. */
const CATEGORY = /^(?:[CLMNPSZ]|C[cfos]|L[lmotu]|M[cen]|N[dlo]|P[cdefios]|S[ckmo]|Z[lps])$/;

class Parser {
  private pos = 0;
  private readonly chars: string[];

  constructor(private readonly pattern: string) {
    this.chars = Array.from(pattern);
  }

  parse(): string {
    const js = this.alternation({ i: false, m: false, s: false }, 0);
    if (this.pos < this.chars.length) throw this.error('unexpected )');
    return js;
  }

  private error(message: string): GoRegexpSyntaxError {
    return new GoRegexpSyntaxError(message, this.pattern);
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  private next(): string {
    const c = this.chars[this.pos++];
    if (c === undefined) throw this.error('trailing backslash at end of expression');
    return c;
  }

  /** Alternatives up to an unmatched `)` or the end; flags set inside last to the group's end. */
  private alternation(outer: Flags, depth: number): string {
    const flags = { ...outer };
    const branches: string[] = [];
    let current: string[] = [];
    let last: 'none' | 'atom' | 'repeat' = 'none';
    let lastAtom: Piece | null = null;
    const flush = () => {
      if (lastAtom) current.push(lastAtom.js);
      lastAtom = null;
    };
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === ')') {
        if (c === ')' && depth === 0) throw this.error('unexpected )');
        flush();
        branches.push(current.join(''));
        return branches.join('|');
      }
      if (c === '|') {
        this.pos++;
        flush();
        branches.push(current.join(''));
        current = [];
        last = 'none';
        continue;
      }
      if (c === '*' || c === '+' || c === '?' || (c === '{' && this.repeatAhead())) {
        if (last === 'repeat') throw this.error('invalid nested repetition operator');
        if (last === 'none' || !lastAtom)
          throw this.error('missing argument to repetition operator');
        const quantifier = this.quantifier();
        lastAtom = { js: `(?:${(lastAtom as Piece).js})${quantifier}` };
        last = 'repeat';
        continue;
      }
      const piece = this.atom(flags, depth);
      if (piece === null) {
        // A flag group such as (?i): it changes what follows and is not an operand.
        flush();
        last = 'none';
        continue;
      }
      flush();
      lastAtom = piece;
      last = 'atom';
    }
  }

  /** Whether a `{` here begins a valid `{n}`, `{n,}` or `{n,m}` (else it is a literal). */
  private repeatAhead(): boolean {
    return /^\{\d+(,\d*)?\}/.test(this.chars.slice(this.pos, this.pos + 16).join(''));
  }

  private quantifier(): string {
    const c = this.next();
    let q: string;
    if (c === '{') {
      const text = this.chars.slice(this.pos).join('');
      const m = /^(\d+)(,(\d*))?\}/.exec(text);
      if (!m) throw this.error('invalid repeat count');
      this.pos += Array.from(m[0]).length;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
      if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && max < min))
        throw this.error('invalid repeat count');
      q = max === min ? `{${min}}` : max < 0 ? `{${min},}` : `{${min},${max}}`;
    } else q = c;
    // A trailing `?` makes it non-greedy: the same answer to "is there a match".
    if (this.peek() === '?') this.pos++;
    return q;
  }

  /** One operand in JavaScript syntax, or null for a flag-only group. */
  private atom(flags: Flags, depth: number): Piece | null {
    const c = this.next();
    switch (c) {
      case '(':
        return this.group(flags, depth);
      case '[':
        return { js: this.withCase(flags, this.charClass(flags)) };
      case '.':
        return { js: flags.s ? '[\\u{0}-\\u{10FFFF}]' : '[^\\u{A}]' };
      case '^':
        return { js: flags.m ? '(?<![^\\u{A}])' : '^' };
      case '$':
        return { js: flags.m ? '(?![^\\u{A}])' : '$' };
      case '\\':
        return this.escape(flags);
      default:
        return { js: this.withCase(flags, cp(code(c))) };
    }
  }

  private withCase(flags: Flags, js: string): string {
    return flags.i ? `(?i:${js})` : js;
  }

  private group(flags: Flags, depth: number): Piece | null {
    if (this.peek() !== '?') return { js: `(${this.closeGroup(flags, depth)})` };
    this.pos++;
    const c = this.peek();
    if (c === 'P' || c === '<') {
      if (c === 'P') {
        this.pos++;
        if (this.peek() !== '<') throw this.error('invalid or unsupported Perl syntax');
      }
      this.pos++;
      let name = '';
      while (this.peek() !== undefined && this.peek() !== '>') name += this.next();
      if (this.peek() !== '>' || !/^\w+$/.test(name)) throw this.error('invalid named capture');
      this.pos++;
      return { js: `(${this.closeGroup(flags, depth)})` };
    }
    // Flags: (?flags) or (?flags:re), with flags [imsU] and an optional `-` before the cleared ones.
    const changed = { ...flags };
    let negate = false;
    let sawFlag = false;
    for (;;) {
      const f = this.peek();
      if (f === undefined) throw this.error('missing closing )');
      this.pos++;
      if (f === 'i' || f === 'm' || f === 's' || f === 'U') {
        if (f !== 'U') changed[f] = !negate;
        sawFlag = true;
        continue;
      }
      if (f === '-') {
        if (negate) throw this.error('invalid or unsupported Perl syntax');
        negate = true;
        sawFlag = false;
        continue;
      }
      if (f === ':' || f === ')') {
        if (negate && !sawFlag) throw this.error('invalid or unsupported Perl syntax');
        if (f === ')') {
          Object.assign(flags, changed);
          return null;
        }
        return { js: `(?:${this.closeGroup(changed, depth)})` };
      }
      throw this.error('invalid or unsupported Perl syntax');
    }
  }

  private closeGroup(flags: Flags, depth: number): string {
    const inner = this.alternation(flags, depth + 1);
    if (this.peek() !== ')') throw this.error('missing closing )');
    this.pos++;
    return inner;
  }

  private escape(flags: Flags): Piece {
    const c = this.next();
    switch (c) {
      case 'A':
        return { js: '^' };
      case 'z':
        return { js: '$' };
      case 'b':
        return { js: '\\b' };
      case 'B':
        return { js: '\\B' };
      case 'Q': {
        let text = '';
        while (this.pos < this.chars.length) {
          if (this.peek() === '\\' && this.peek(1) === 'E') {
            this.pos += 2;
            break;
          }
          text += this.withCase(flags, cp(code(this.next())));
        }
        return { js: text === '' ? '(?:)' : `(?:${text})` };
      }
    }
    const perl = this.perlClass(c);
    if (perl !== null) return { js: this.withCase(flags, perl) };
    const unicode = this.unicodeClass(c);
    if (unicode !== null) return { js: this.withCase(flags, unicode) };
    return { js: this.withCase(flags, cp(this.charEscape(c))) };
  }

  /** `\d \D \s \S \w \W` as a complete JavaScript class, or null. */
  private perlClass(c: string): string | null {
    const body = PERL_CLASSES[c.toLowerCase()];
    if (body === undefined) return null;
    return c === c.toLowerCase() ? `[${body}]` : `[^${body}]`;
  }

  /** `\pL \p{Greek} \PL \p{^L}` as a JavaScript property escape, or null. */
  private unicodeClass(c: string): string | null {
    if (c !== 'p' && c !== 'P') return null;
    let name: string;
    const first = this.next();
    if (first === '{') {
      name = '';
      while (this.peek() !== undefined && this.peek() !== '}') name += this.next();
      if (this.peek() !== '}') throw this.error('invalid character class range');
      this.pos++;
    } else name = first;
    let negated = c === 'P';
    if (name.startsWith('^')) {
      negated = !negated;
      name = name.slice(1);
    }
    const letter = negated ? 'P' : 'p';
    if (name === 'Any') return negated ? '[^\\u{0}-\\u{10FFFF}]' : '[\\u{0}-\\u{10FFFF}]';
    const js = CATEGORY.test(name) ? `\\${letter}{${name}}` : `\\${letter}{Script=${name}}`;
    try {
      new RegExp(js, 'v');
    } catch {
      throw this.error('invalid character class range');
    }
    return js;
  }

  /** A single-character escape after `\`: its code point. */
  private charEscape(c: string): number {
    if (c >= '1' && c <= '7') {
      // A lone \1–\7 is a back-reference, which RE2 does not support.
      const d = this.peek();
      if (d === undefined || d < '0' || d > '7') throw this.error('invalid escape sequence');
    }
    if (c >= '0' && c <= '7') {
      let value = Number(c);
      for (let k = 0; k < 2; k++) {
        const d = this.peek();
        if (d === undefined || d < '0' || d > '7') break;
        value = value * 8 + Number(this.next());
      }
      return value;
    }
    if (c === 'x') {
      if (this.peek() === '{') {
        this.pos++;
        let hex = '';
        while (this.peek() !== undefined && this.peek() !== '}') hex += this.next();
        if (this.peek() !== '}' || !/^[0-9A-Fa-f]+$/.test(hex) || parseInt(hex, 16) > 0x10ffff)
          throw this.error('invalid escape sequence');
        this.pos++;
        return parseInt(hex, 16);
      }
      const hex = `${this.peek() ?? ''}${this.peek(1) ?? ''}`;
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw this.error('invalid escape sequence');
      this.pos += 2;
      return parseInt(hex, 16);
    }
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return simple;
    if (code(c) < 0x80 && !isAsciiAlnum(c)) return code(c);
    throw this.error('invalid escape sequence');
  }

  /** After `[`: the class as one JavaScript `v`-mode class. */
  private charClass(flags: Flags): string {
    void flags;
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.pos++;
    }
    const items: string[] = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw this.error('missing closing ]');
      if (c === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      if (c === '[' && this.peek(1) === ':') {
        const posix = this.posixClass();
        if (posix !== null) {
          items.push(posix);
          continue;
        }
      }
      if (c === '\\') {
        const e = this.peek(1);
        if (e !== undefined) {
          const perl = this.perlClass(e);
          if (perl !== null) {
            this.pos += 2;
            items.push(perl);
            continue;
          }
          if (e === 'p' || e === 'P') {
            this.pos += 2;
            items.push(this.unicodeClass(e) ?? '');
            continue;
          }
        }
      }
      const lo = this.classChar();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++;
        const hi = this.classChar();
        if (hi < lo) throw this.error('invalid character class range');
        items.push(`${cp(lo)}-${cp(hi)}`);
      } else items.push(cp(lo));
    }
    if (items.length === 0) return negated ? '[\\u{0}-\\u{10FFFF}]' : '[]';
    return `[${negated ? '^' : ''}${items.join('')}]`;
  }

  /** `[:name:]` or `[:^name:]` at the cursor, as a nested class; null when it is not one. */
  private posixClass(): string | null {
    const rest = this.chars.slice(this.pos).join('');
    const m = /^\[:(\^?)([a-z]*):\]/.exec(rest);
    if (!m) return null;
    const body = POSIX_CLASSES[m[2] ?? ''];
    if (body === undefined) throw this.error('invalid character class range');
    this.pos += m[0].length;
    return `[${m[1] ? '^' : ''}${body}]`;
  }

  private classChar(): number {
    const c = this.next();
    if (c !== '\\') return code(c);
    return this.charEscape(this.next());
  }
}

const cache = new Map<string, RegExp | GoRegexpSyntaxError>();

/** Go's `regexp.Compile(pattern)` as a JavaScript RegExp; throws GoRegexpSyntaxError like Go. */
export function compileGoRegexp(pattern: string): RegExp {
  let compiled = cache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(new Parser(pattern).parse(), 'v');
    } catch (e) {
      if (!(e instanceof GoRegexpSyntaxError)) throw e;
      compiled = e;
    }
    cache.set(pattern, compiled);
  }
  if (compiled instanceof GoRegexpSyntaxError) throw compiled;
  return compiled;
}

/** Go's `regexp.MatchString(pattern, s)` with the error dropped: unanchored; invalid → false. */
export function goMatchString(pattern: string, s: string): boolean {
  try {
    return compileGoRegexp(pattern).test(s);
  } catch (e) {
    if (e instanceof GoRegexpSyntaxError) return false;
    throw e;
  }
}
