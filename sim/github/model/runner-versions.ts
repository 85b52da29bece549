/**
 * Runner version enforcement (reference: updates-2026-12 §2.5): since 2026-09-25 a runner below
 * the floor gets `403 Runner version vX is deprecated and cannot receive messages` when it asks
 * for work, and exits 0. `GET /actions/runners/deprecations/{version}` (GitHub changelog
 * 2026-09-03) tells when a version stops registering and stops running jobs.
 */
import { isBelow } from '../../runner-version.js';

/** Versions below `below` are deprecated: no registration after one time, no jobs after another. */
export interface RunnerDeprecation {
  /** The first version that is not deprecated, e.g. `2.329.0`. */
  below: string;
  /** Sim ms since the epoch from which such runners get no jobs (they exit 0). */
  runtimeDeprecatesAt: number;
  /** Sim ms since the epoch from which such runners may not register; null: not announced. */
  registrationDeprecatesAt: number | null;
}

/** The deprecation dates of one version (both null when it is not deprecated). */
export function deprecationDates(
  policy: RunnerDeprecation | undefined,
  version: string,
): { runtime: number | null; registration: number | null } {
  if (!policy || !isBelow(version, policy.below)) return { runtime: null, registration: null };
  return { runtime: policy.runtimeDeprecatesAt, registration: policy.registrationDeprecatesAt };
}

export function deprecatedRunnerMessage(version: string): string {
  const bare = version.replace(/^v/, '');
  return `Runner version v${bare} is deprecated and cannot receive messages.`;
}
