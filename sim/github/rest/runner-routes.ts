import type { Route, RequestContext } from '../http/route.js';
import { error } from '../http/route.js';
import { paginate } from '../http/paginate.js';
import { isBusy } from '../model/sim-actions-service.js';
import { parseRunnerVersion } from '../../runner-version.js';
import { deprecationDates } from '../model/runner-versions.js';
import type { Runner } from '../model/types.js';
import { isoOrNull } from '../payloads/api-urls.js';
import type { RestDeps } from './route-context.js';
import { byOf, mayAccess } from './route-context.js';

/** Self-hosted runner registrations of an organisation (`/orgs/{org}`) or a repository. */
export function runnerRoutes(deps: RestDeps): Route[] {
  const scopeOf = (ctx: RequestContext) =>
    ctx.params['org'] ?? `${ctx.params['owner'] ?? ''}/${ctx.params['repo'] ?? ''}`;
  const allowed = (ctx: RequestContext) => {
    const account = ctx.params['org'] ?? ctx.params['owner'] ?? '';
    const exists = ctx.params['org']
      ? deps.store.accounts.has(account)
      : deps.store.repos.has(scopeOf(ctx));
    return exists && mayAccess(ctx, account);
  };
  const runnersIn = (scope: string) =>
    [...deps.store.runners.values()].filter(
      (runner) => runner.registered && runner.scaleSet.owner === scope,
    );
  const runnerBody = (runner: Runner) => ({
    id: runner.id,
    name: runner.name,
    os: 'Linux',
    status: runner.status,
    busy: isBusy(deps.store, runner),
    ephemeral: true,
    runner_group_id: runner.scaleSet.runnerGroupId,
    labels: [{ id: runner.scaleSet.id, name: runner.scaleSet.name, type: 'read-only' }],
  });
  const list: Route['handler'] = (ctx) => {
    if (!allowed(ctx)) return error(404, 'Not Found');
    const name = ctx.query.get('name');
    const runners = runnersIn(scopeOf(ctx)).filter((runner) => !name || runner.name === name);
    const { page, headers } = paginate(ctx, runners);
    return {
      status: 200,
      headers,
      body: { total_count: runners.length, runners: page.map(runnerBody) },
    };
  };
  const get: Route['handler'] = (ctx) => {
    if (!allowed(ctx)) return error(404, 'Not Found');
    const runner = runnersIn(scopeOf(ctx)).find(
      (candidate) => candidate.id === Number(ctx.params['runner_id']),
    );
    return runner ? { status: 200, body: runnerBody(runner) } : error(404, 'Not Found');
  };
  const remove: Route['handler'] = (ctx) => {
    if (!allowed(ctx)) return error(404, 'Not Found');
    const scope = scopeOf(ctx);
    const target = `${ctx.params['org'] ? `orgs/${scope}` : `repos/${scope}`}/actions/runners/${ctx.params['runner_id'] ?? ''}`;
    const runner = runnersIn(scope).find(
      (candidate) => candidate.id === Number(ctx.params['runner_id']),
    );
    const status = !runner ? 404 : isBusy(deps.store, runner) ? 422 : 204;
    deps.engine.audit(byOf(ctx), 'delete-runner', target, status);
    if (!runner) return error(404, 'Not Found');
    if (status === 422)
      return error(422, `Bad request - Runner "${runner.name}" is still running a job`);
    runner.registered = false;
    return { status: 204 };
  };
  /**
   * `GET /actions/runners/deprecations/{version}` (GitHub changelog 2026-09-03): when a runner
   * version stops registering and stops running jobs; null when it is not scheduled. The changelog
   * names only these two fields; a malformed version answers 404 (not documented: an assumption).
   */
  const deprecations: Route['handler'] = (ctx) => {
    const version = ctx.params['version'] ?? '';
    if (!parseRunnerVersion(version)) return error(404, 'Not Found');
    const dates = deprecationDates(deps.store.runnerDeprecation, version);
    return {
      status: 200,
      body: {
        runtime_deprecates_at: isoOrNull(dates.runtime),
        registration_deprecates_at: isoOrNull(dates.registration),
      },
    };
  };
  return [
    {
      method: 'GET',
      path: '/actions/runners/deprecations/{version}',
      auth: 'token',
      handler: deprecations,
    },
    { method: 'GET', path: '/orgs/{org}/actions/runners', auth: 'token', handler: list },
    { method: 'GET', path: '/orgs/{org}/actions/runners/{runner_id}', auth: 'token', handler: get },
    {
      method: 'GET',
      path: '/repos/{owner}/{repo}/actions/runners/{runner_id}',
      auth: 'token',
      handler: get,
    },
    {
      method: 'DELETE',
      path: '/orgs/{org}/actions/runners/{runner_id}',
      auth: 'token',
      handler: remove,
    },
    { method: 'GET', path: '/repos/{owner}/{repo}/actions/runners', auth: 'token', handler: list },
    {
      method: 'DELETE',
      path: '/repos/{owner}/{repo}/actions/runners/{runner_id}',
      auth: 'token',
      handler: remove,
    },
  ];
}
