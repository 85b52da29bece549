/** One line of the doctor's report, as `--json` prints it. */
export interface DoctorCheck {
  id: string;
  status: 'ok' | 'finding' | 'error';
  /** What the check saw, and why it matters. */
  why: string;
  /** What to do about it ("Nothing to do." when ok). */
  what: string;
}

/**
 * A check as the doctor keeps it: `unreachable` marks an error that came from not reaching
 * something (a cluster, GitHub, AWS), which is what exit code 2 reports.
 */
export interface CheckResult extends DoctorCheck {
  unreachable?: true;
}

const NOTHING_TO_DO = 'Nothing to do.';

export const ok = (id: string, why: string): CheckResult => ({
  id,
  status: 'ok',
  why,
  what: NOTHING_TO_DO,
});

export const finding = (id: string, why: string, what: string): CheckResult => ({
  id,
  status: 'finding',
  why,
  what,
});

/** The check could not run for a reason other than reaching something (it is not available). */
export const failed = (id: string, why: string, what: string): CheckResult => ({
  id,
  status: 'error',
  why,
  what,
});

/** The check could not reach what it checks. */
export const unreachable = (id: string, why: string, what: string): CheckResult => ({
  id,
  status: 'error',
  why,
  what,
  unreachable: true,
});

/** 2 when something could not be reached, else 1 with findings, else 0. */
export function exitCodeOf(checks: readonly CheckResult[]): 0 | 1 | 2 {
  if (checks.some((c) => c.unreachable)) return 2;
  return checks.some((c) => c.status === 'finding') ? 1 : 0;
}

/** The report as `--json` prints it: the four documented fields of each check, nothing else. */
export function reportOf(checks: readonly CheckResult[]): { checks: DoctorCheck[] } {
  return { checks: checks.map(({ id, status, why, what }) => ({ id, status, why, what })) };
}

/** An error's message, with its cause's when it has one (client-node and octokit wrap them). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** "3 items: a, b, c" with at most `max` named, for a finding's text. */
export function listed(items: readonly string[], max = 5): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}
