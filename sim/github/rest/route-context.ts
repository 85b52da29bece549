import type { GitHubStore } from '../model/github-store.js';
import type { JobEngine } from '../model/job-engine.js';
import type { RunControl } from '../model/run-control.js';
import type { Repo, Run } from '../model/types.js';
import type { ApiUrls } from '../payloads/api-urls.js';
import type { ApiResponse, RequestContext } from '../http/route.js';
import { error } from '../http/route.js';

/** What REST handlers share: the model, and how payload URLs are written. */
export interface RestDeps {
  store: GitHubStore;
  engine: JobEngine;
  control: RunControl;
  urls: ApiUrls;
}

/** The repository in the path, if the caller's token may see it. */
export function visibleRepo(deps: RestDeps, ctx: RequestContext): Repo | ApiResponse {
  const repo = deps.store.repos.get(`${ctx.params['owner']}/${ctx.params['repo']}`);
  if (!repo || !mayAccess(ctx, repo.owner.login)) return error(404, 'Not Found');
  return repo;
}

/** Installation tokens see their account's repositories; user tokens see everything. */
export function mayAccess(ctx: RequestContext, ownerLogin: string): boolean {
  const principal = ctx.principal;
  if (!principal) return false;
  return principal.kind === 'user' || principal.installation.account.login === ownerLogin;
}

export function runInRepo(deps: RestDeps, repo: Repo, id: string | undefined): Run | undefined {
  const run = deps.store.runs.get(Number(id));
  return run && run.repo === repo ? run : undefined;
}

export function isResponse(value: unknown): value is ApiResponse {
  return (
    typeof value === 'object' &&
    value !== null &&
    'status' in value &&
    typeof value.status === 'number'
  );
}

export function byOf(ctx: RequestContext) {
  return ctx.principal?.by ?? 'user';
}

export function loginOf(ctx: RequestContext): string | undefined {
  return ctx.principal?.kind === 'user' ? ctx.principal.login : undefined;
}
