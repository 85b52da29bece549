import type { AppCredentials } from '../auth/app-credentials.js';
import type { TokenRegistry } from '../auth/token-registry.js';
import type { Route } from '../http/route.js';
import { error } from '../http/route.js';
import { paginate } from '../http/paginate.js';
import type { Installation } from '../model/types.js';
import { isoSeconds } from '../payloads/api-urls.js';
import { userBody } from '../payloads/account-body.js';
import type { WebhookDispatcher } from '../webhooks/webhook-dispatcher.js';
import { checkRunRoutes } from './check-run-routes.js';
import { APP_PERMISSIONS, linkApp, permissionsOf } from './installation-permissions.js';
import type { RestDeps } from './route-context.js';
import { repositoryBody } from '../payloads/repository-body.js';

/** GitHub's answer to a suspended installation's token, new or already issued. */
export const SUSPENDED_MESSAGE = 'This installation has been suspended';

export interface AppRouteDeps extends RestDeps {
  credentials: AppCredentials;
  tokens: TokenRegistry;
  webhooks: WebhookDispatcher;
}

/**
 * Routes of a GitHub App: with its JWT, installations, tokens and webhook deliveries; with an
 * installation token, the installation's repositories and the Checks API. What each installation
 * is granted can differ from what the App asks (setInstallationPermissions).
 */
export function appRoutes(deps: AppRouteDeps): Route[] {
  linkApp(deps.credentials, deps.store);
  const now = () => deps.store.clock.now();
  const installationBody = (installation: Installation) => ({
    id: installation.id,
    account: userBody(installation.account, deps.urls),
    app_id: deps.credentials.appId,
    app_slug: 'runner-medic',
    target_id: installation.account.id,
    target_type: installation.account.type,
    repository_selection: 'all',
    permissions: permissionsOf(deps.store, installation),
    events: ['workflow_job', 'workflow_run'],
    access_tokens_url: `${deps.urls.api}/app/installations/${installation.id}/access_tokens`,
    suspended_at:
      installation.suspendedAt === undefined ? null : isoSeconds(installation.suspendedAt),
  });
  const byAccount =
    (login: string | undefined): Route['handler'] =>
    () => {
      const installation = login ? deps.store.installationFor(login) : undefined;
      return installation
        ? { status: 200, body: installationBody(installation) }
        : error(404, 'Not Found');
    };
  return [
    {
      method: 'GET',
      path: '/app',
      auth: 'jwt',
      handler: () => ({
        status: 200,
        body: {
          id: deps.credentials.appId,
          client_id: deps.credentials.clientId,
          slug: 'runner-medic',
          name: 'runner-medic',
          permissions: APP_PERMISSIONS,
          events: ['workflow_job', 'workflow_run'],
        },
      }),
    },
    {
      method: 'GET',
      path: '/app/installations',
      auth: 'jwt',
      handler: () => ({
        status: 200,
        body: [...deps.store.installations.values()].map(installationBody),
      }),
    },
    {
      method: 'GET',
      path: '/orgs/{org}/installation',
      auth: 'jwt',
      handler: (ctx) => byAccount(ctx.params['org'])(ctx),
    },
    {
      method: 'GET',
      path: '/repos/{owner}/{repo}/installation',
      auth: 'jwt',
      handler: (ctx) => byAccount(ctx.params['owner'])(ctx),
    },
    {
      method: 'POST',
      path: '/app/installations/{installation_id}/access_tokens',
      auth: 'jwt',
      handler: (ctx) => {
        const installation = deps.store.installations.get(Number(ctx.params['installation_id']));
        if (!installation) return error(404, 'Not Found');
        if (installation.suspendedAt !== undefined) return error(403, SUSPENDED_MESSAGE);
        const issued = deps.tokens.issueInstallationToken(installation, now());
        return {
          status: 201,
          body: {
            token: issued.token,
            expires_at: isoSeconds(issued.expiresAt),
            permissions: permissionsOf(deps.store, installation),
            repository_selection: 'all',
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/installation/repositories',
      auth: 'token',
      handler: (ctx) => {
        const principal = ctx.principal;
        if (principal?.kind !== 'installation')
          return error(403, 'You must authenticate with an installation access token');
        // `repository_selection: all`: every repository of the installing account.
        const repos = [...deps.store.repos.values()]
          .filter((repo) => repo.owner.login === principal.installation.account.login)
          .sort((a, b) => a.id - b.id);
        const { page, headers } = paginate(ctx, repos);
        return {
          status: 200,
          headers,
          body: {
            total_count: repos.length,
            repositories: page.map((repo) => repositoryBody(repo, deps.urls)),
            repository_selection: 'all',
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/app/hook/deliveries',
      auth: 'jwt',
      handler: (ctx) => {
        const perPage = Math.min(100, Number(ctx.query.get('per_page') ?? 30) || 30);
        const cursor = Number(ctx.query.get('cursor') ?? Number.MAX_SAFE_INTEGER);
        const sent = deps.webhooks
          .deliveries()
          .filter((record) => record.deliveredAt !== null || record.dropped)
          .filter((record) => record.id < cursor)
          .sort((a, b) => b.id - a.id);
        const page = sent.slice(0, perPage);
        const last = page[page.length - 1];
        const headers: Record<string, string> =
          last && sent.length > perPage
            ? {
                link: `<${ctx.baseUrl}/app/hook/deliveries?per_page=${perPage}&cursor=${last.id}>; rel="next"`,
              }
            : {};
        return {
          status: 200,
          headers,
          body: page.map((record) => ({
            id: record.id,
            guid: record.guid,
            delivered_at: isoSeconds(record.deliveredAt ?? record.scheduledAt),
            redelivery: record.kind === 'redelivery',
            duration: 0.01,
            status:
              record.statusCode !== null && record.statusCode < 300
                ? 'OK'
                : record.dropped
                  ? 'failed to connect'
                  : `Invalid HTTP Response: ${record.statusCode ?? 0}`,
            status_code: record.statusCode ?? 0,
            event: record.event,
            action: record.action,
            installation_id: record.installationId,
            repository_id: record.repositoryId,
          })),
        };
      },
    },
    {
      method: 'POST',
      path: '/app/hook/deliveries/{delivery_id}/attempts',
      auth: 'jwt',
      handler: (ctx) => {
        const record = deps.webhooks
          .deliveries()
          .find((candidate) => candidate.id === Number(ctx.params['delivery_id']));
        if (!record) return error(404, 'Not Found');
        deps.engine.audit(
          'runner-medic',
          'redeliver-webhook',
          `app/hook/deliveries/${record.id}`,
          202,
        );
        deps.webhooks.redeliver(record.guid);
        return { status: 202, body: {} };
      },
    },
    ...checkRunRoutes(deps),
  ];
}
