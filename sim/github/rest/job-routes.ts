import type { Route } from '../http/route.js';
import { error } from '../http/route.js';
import { paginate } from '../http/paginate.js';
import type { Job } from '../model/types.js';
import { jobBody } from '../payloads/job-body.js';
import type { RestDeps } from './route-context.js';
import { isResponse, runInRepo, visibleRepo } from './route-context.js';

const REPO = '/repos/{owner}/{repo}';

/** Jobs and their check-run annotations. */
export function jobRoutes(deps: RestDeps): Route[] {
  const listJobs =
    (attemptFilter: 'latest' | 'all' | number): Route['handler'] =>
    (ctx) => {
      const repo = visibleRepo(deps, ctx);
      if (isResponse(repo)) return repo;
      const run = runInRepo(deps, repo, ctx.params['run_id']);
      if (!run) return error(404, 'Not Found');
      let jobs: Job[];
      if (typeof attemptFilter === 'number') {
        const attempt = Number(ctx.params['attempt']);
        if (!(attempt >= 1 && attempt <= run.attempt)) return error(404, 'Not Found');
        jobs = run.jobs.filter((job) => job.runAttempt === attempt);
      } else {
        const filter = ctx.query.get('filter') ?? attemptFilter;
        if (filter !== 'latest' && filter !== 'all') return error(422, `Invalid filter: ${filter}`);
        jobs = filter === 'all' ? [...run.jobs] : deps.store.latestJobs(run);
      }
      const { page, headers } = paginate(ctx, jobs);
      return {
        status: 200,
        headers,
        body: { total_count: jobs.length, jobs: page.map((job) => jobBody(job, run, deps.urls)) },
      };
    };
  const findJob = (ctx: Parameters<Route['handler']>[0], id: string | undefined) => {
    const repo = visibleRepo(deps, ctx);
    if (isResponse(repo)) return repo;
    const job = deps.store.jobs.get(Number(id));
    if (!job || deps.engine.runOf(job).repo !== repo) return error(404, 'Not Found');
    return job;
  };
  return [
    {
      method: 'GET',
      path: `${REPO}/actions/runs/{run_id}/jobs`,
      auth: 'token',
      handler: listJobs('latest'),
    },
    {
      method: 'GET',
      path: `${REPO}/actions/runs/{run_id}/attempts/{attempt}/jobs`,
      auth: 'token',
      handler: listJobs(0),
    },
    {
      method: 'GET',
      path: `${REPO}/actions/jobs/{job_id}`,
      auth: 'token',
      handler: (ctx) => {
        const job = findJob(ctx, ctx.params['job_id']);
        if (isResponse(job)) return job;
        return { status: 200, body: jobBody(job, deps.engine.runOf(job), deps.urls) };
      },
    },
    {
      method: 'GET',
      path: `${REPO}/check-runs/{check_run_id}/annotations`,
      auth: 'token',
      handler: (ctx) => {
        const job = findJob(ctx, ctx.params['check_run_id']);
        if (isResponse(job)) return job;
        const blob = `${deps.urls.web}/${deps.engine.runOf(job).repo.fullName}/blob/${deps.engine.runOf(job).headSha}/.github`;
        const { page, headers } = paginate(ctx, job.annotations);
        return {
          status: 200,
          headers,
          body: page.map((annotation) => ({
            path: annotation.path,
            blob_href: blob,
            start_line: annotation.startLine,
            start_column: null,
            end_line: annotation.endLine,
            end_column: null,
            annotation_level: annotation.level,
            title: annotation.title,
            message: annotation.message,
            raw_details: annotation.rawDetails,
          })),
        };
      },
    },
  ];
}
