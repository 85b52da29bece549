/**
 * How to treat a GitHub refusal of a re-run: `403 This workflow is already running` clears when
 * the run completes (retry later); other 403s ("over a month ago", "cannot be retried") are final.
 */
export function rerunRefusal(status: number, message: string): 'retry-later' | 'gave-up' | 'error' {
  if (status === 403 && /already running/i.test(message)) return 'retry-later';
  if (status === 403) return 'gave-up';
  if (status === 422 && /still running a job/i.test(message)) return 'retry-later';
  return 'error';
}
