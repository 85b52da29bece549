import type { Octokit } from '@octokit/core';
import type { Api } from '@octokit/plugin-rest-endpoint-methods';

/**
 * The REST routes runner-medic calls, under the names octokit's plugin-rest-endpoint-methods
 * gives them (its generated table, which test/unit/adapters/github/gateway-rest.test.ts holds
 * these to). That plugin builds a map of all ~1,000 of GitHub's routes when it is imported, about
 * a sixth of the engine functions' start-up over their AWS SDK clients; these are the ones used.
 */
const ROUTES = {
  actions: {
    cancelWorkflowRun: 'POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel',
    deleteSelfHostedRunnerFromOrg: 'DELETE /orgs/{org}/actions/runners/{runner_id}',
    deleteSelfHostedRunnerFromRepo: 'DELETE /repos/{owner}/{repo}/actions/runners/{runner_id}',
    forceCancelWorkflowRun: 'POST /repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel',
    getJobForWorkflowRun: 'GET /repos/{owner}/{repo}/actions/jobs/{job_id}',
    getSelfHostedRunnerForOrg: 'GET /orgs/{org}/actions/runners/{runner_id}',
    getSelfHostedRunnerForRepo: 'GET /repos/{owner}/{repo}/actions/runners/{runner_id}',
    getWorkflowRun: 'GET /repos/{owner}/{repo}/actions/runs/{run_id}',
    listJobsForWorkflowRun: 'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs',
    listSelfHostedRunnersForOrg: 'GET /orgs/{org}/actions/runners',
    listSelfHostedRunnersForRepo: 'GET /repos/{owner}/{repo}/actions/runners',
    listWorkflowRunsForRepo: 'GET /repos/{owner}/{repo}/actions/runs',
    reRunJobForWorkflowRun: 'POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun',
    reRunWorkflowFailedJobs: 'POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs',
  },
  apps: {
    getOrgInstallation: 'GET /orgs/{org}/installation',
    getRepoInstallation: 'GET /repos/{owner}/{repo}/installation',
    listReposAccessibleToInstallation: 'GET /installation/repositories',
    listWebhookDeliveries: 'GET /app/hook/deliveries',
    redeliverWebhookDelivery: 'POST /app/hook/deliveries/{delivery_id}/attempts',
  },
  checks: {
    listAnnotations: 'GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations',
    listForRef: 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
  },
  rateLimit: {
    get: 'GET /rate_limit',
  },
} as const;

type Routes = typeof ROUTES;
type Rest = Api['rest'];

/** `octokit.rest` with only runner-medic's methods, each typed as plugin-rest-endpoint-methods types it. */
type GatewayRest = {
  [Scope in keyof Routes]: Pick<Rest[Scope], keyof Routes[Scope] & keyof Rest[Scope]>;
};

/** The routes by scope and method name; the unit test compares them with octokit's table. */
export const GATEWAY_ROUTES: { [Scope in keyof Routes]: Record<keyof Routes[Scope], string> } =
  ROUTES;

/**
 * An octokit plugin: `octokit.rest.<scope>.<method>`, each a `request` with its route as
 * defaults (with `endpoint`, which the paginate plugin reads), as plugin-rest-endpoint-methods
 * makes them for routes without decorations, which none of these has.
 */
export function gatewayRest(octokit: Octokit): { rest: GatewayRest } {
  const rest: Record<string, Record<string, unknown>> = {};
  for (const [scope, methods] of Object.entries(ROUTES)) {
    const scoped: Record<string, unknown> = {};
    for (const [name, route] of Object.entries(methods)) {
      const [method, url] = route.split(' ');
      scoped[name] = octokit.request.defaults({ method, url });
    }
    rest[scope] = scoped;
  }
  return { rest: rest as unknown as GatewayRest };
}
