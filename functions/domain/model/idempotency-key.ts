/**
 * A deterministic idempotency key: the same decision over the same facts always yields the same
 * key, whatever `now` is. Parts are joined with `:`; a `:` or `%` inside a part is escaped.
 */
export function idempotencyKey(...parts: (string | number)[]): string {
  return parts.map((p) => String(p).replace(/%/g, '%25').replace(/:/g, '%3A')).join(':');
}

/** A key derived from another key: `<base>:<parts…>`. */
export function subKey(base: string, ...parts: (string | number)[]): string {
  return `${base}:${idempotencyKey(...parts)}`;
}

/** The re-run budget slot of a job: its run and name, across attempts (ids change per attempt). */
export function rerunBudgetKey(repo: string, runId: number, jobName: string): string {
  return idempotencyKey('budget', repo, runId, jobName);
}
