/** Epoch ms as ISO 8601 for messages; never throws (an out-of-range time prints as a number). */
export function isoTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
