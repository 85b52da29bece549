import type { Job, Run } from './types.js';

/** How audit entries name what a call touched. */
export function jobTarget(run: Run, job: Job): string {
  return `repos/${run.repo.fullName}/actions/jobs/${job.id}`;
}

export function runTarget(run: Run): string {
  return `repos/${run.repo.fullName}/actions/runs/${run.id}`;
}
