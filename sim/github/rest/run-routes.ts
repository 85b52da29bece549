import type { Route } from '../http/route.js';
import { error } from '../http/route.js';
import { paginate } from '../http/paginate.js';
import type { Outcome } from '../model/run-control.js';
import { runBody } from '../payloads/run-body.js';
import { matchesCreated } from './created-filter.js';
import type { RestDeps } from './route-context.js';
import { byOf, isResponse, loginOf, runInRepo, visibleRepo } from './route-context.js';

const REPO = '/repos/{owner}/{repo}/actions';

/** Workflow runs: list, get, re-run, cancel. */
export function runRoutes(deps: RestDeps): Route[] {
  const outcome = (result: Outcome) =>
    result.status >= 400
      ? error(result.status, result.message ?? 'Error')
      : { status: result.status, body: {} };
  return [
    {
      method: 'GET',
      path: `${REPO}/runs`,
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        const status = ctx.query.get('status');
        const runs = [...deps.store.runs.values()]
          .filter((run) => run.repo === repo)
          .filter((run) => !status || run.status === status || run.conclusion === status)
          .filter((run) => matchesCreated(run.createdAt, ctx.query.get('created')))
          .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
        const { page, headers } = paginate(ctx, runs);
        return {
          status: 200,
          headers,
          body: {
            total_count: runs.length,
            workflow_runs: page.map((run) => runBody(run, deps.urls)),
          },
        };
      },
    },
    {
      method: 'GET',
      path: `${REPO}/runs/{run_id}`,
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        const run = runInRepo(deps, repo, ctx.params['run_id']);
        return run ? { status: 200, body: runBody(run, deps.urls) } : error(404, 'Not Found');
      },
    },
    {
      method: 'GET',
      path: `${REPO}/runs/{run_id}/attempts/{attempt}`,
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        const run = runInRepo(deps, repo, ctx.params['run_id']);
        const attempt = Number(ctx.params['attempt']);
        if (!run || !(attempt >= 1 && attempt <= run.attempt)) return error(404, 'Not Found');
        return { status: 200, body: { ...runBody(run, deps.urls), run_attempt: attempt } };
      },
    },
    ...(['rerun', 'rerun-failed-jobs', 'cancel', 'force-cancel'] as const).map((action): Route => ({
      method: 'POST',
      path: `${REPO}/runs/{run_id}/${action}`,
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        const run = runInRepo(deps, repo, ctx.params['run_id']);
        if (!run) return error(404, 'Not Found');
        const by = byOf(ctx);
        const login = loginOf(ctx);
        if (action === 'rerun') return outcome(deps.control.rerunRun(run.id, by, login));
        if (action === 'rerun-failed-jobs')
          return outcome(deps.control.rerunFailedJobs(run.id, by, login));
        return outcome(deps.control.cancel(run.id, by, action === 'force-cancel'));
      },
    })),
    {
      method: 'POST',
      path: `${REPO}/jobs/{job_id}/rerun`,
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        const job = deps.store.jobs.get(Number(ctx.params['job_id']));
        if (!job || deps.engine.runOf(job).repo !== repo) return error(404, 'Not Found');
        return outcome(deps.control.rerunJob(job.id, byOf(ctx), loginOf(ctx)));
      },
    },
  ];
}
