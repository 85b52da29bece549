/** Runner versions (`2.329.0`, optionally `v`-prefixed), as both twins compare them. */

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)$/;

/** `[major, minor, patch]`, or undefined when `text` is not a runner version. */
export function parseRunnerVersion(text: string): [number, number, number] | undefined {
  const match = VERSION.exec(text);
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** `2.328.0` is below `2.329.0`; anything that is not a version is never below. */
export function isBelow(version: string, floor: string): boolean {
  const a = parseRunnerVersion(version);
  const b = parseRunnerVersion(floor);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i += 1) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}
