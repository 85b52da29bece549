/** GitHub's `created` search qualifier: `>=T`, `>T`, `<=T`, `<T`, `A..B`, or a bare date (that day). */
export function matchesCreated(createdMs: number, qualifier: string | null): boolean {
  if (!qualifier) return true;
  const range = /^(.+)\.\.(.+)$/.exec(qualifier);
  if (range) return createdMs >= parse(range[1]) && createdMs <= parse(range[2], true);
  const op = /^(>=|<=|>|<)(.+)$/.exec(qualifier);
  if (op) {
    const at = parse(op[2]);
    if (op[1] === '>=') return createdMs >= at;
    if (op[1] === '>') return createdMs > at;
    if (op[1] === '<=') return createdMs <= parse(op[2], true);
    return createdMs < at;
  }
  return createdMs >= parse(qualifier) && createdMs <= parse(qualifier, true);
}

/** A date or date-time; a bare date's end is the last millisecond of that day when `end` is set. */
function parse(text: string | undefined, end = false): number {
  const value = text ?? '';
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return end ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return end && /^\d{4}-\d{2}-\d{2}$/.test(value) ? ms + 86_399_999 : ms;
}
