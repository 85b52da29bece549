import type { AppCredentials } from '../auth/app-credentials.js';
import type { Route, RequestContext } from '../http/route.js';
import { error } from '../http/route.js';
import { paginate } from '../http/paginate.js';
import type { GitHubStore } from '../model/github-store.js';
import { nodeId } from '../model/id-source.js';
import type { Repo } from '../model/types.js';
import { userBody } from '../payloads/account-body.js';
import { isoSeconds } from '../payloads/api-urls.js';
import { allows, permissionsOf, storeOfApp } from './installation-permissions.js';
import type { RestDeps } from './route-context.js';
import { isResponse, visibleRepo } from './route-context.js';

/** A check run created through the Checks API (a job's own check run is its job). */
export interface StoredCheckRun {
  id: number;
  repo: Repo;
  headSha: string;
  name: string;
  externalId: string | null;
  detailsUrl: string | null;
  status: string;
  conclusion: string | null;
  startedAt: number;
  completedAt: number | null;
  title: string | null;
  summary: string | null;
  text: string | null;
  /** The App that created it: the installation's id (the twin has one App). */
  installationId: number | null;
  createdAt: number;
}

const STATUSES = ['queued', 'in_progress', 'completed', 'waiting', 'requested', 'pending'];
const CONCLUSIONS = [
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'success',
  'skipped',
  'stale',
  'timed_out',
];
/** GitHub's limit on `output.summary` and `output.text` (docs: "Maximum length: 65535 characters"). */
const MAX_OUTPUT_CHARS = 65_535;
/**
 * Check-run ids share the job id space on GitHub (a job is a check run). The twin counts its own
 * from far above the jobs' ids so that creating one never moves the model's seeded id stream.
 */
const CHECK_RUN_ID_BASE = 90_000_000_000;

const books = new WeakMap<GitHubStore, StoredCheckRun[]>();

function bookOf(store: GitHubStore): StoredCheckRun[] {
  let book = books.get(store);
  if (!book) {
    book = [];
    books.set(store, book);
  }
  return book;
}

/**
 * The check runs created in the twin whose App has these credentials (`GitHubSim.app`), oldest
 * first; still readable after the twin has stopped.
 */
export function checkRunsOf(credentials: AppCredentials): readonly StoredCheckRun[] {
  const store = storeOfApp(credentials);
  return store ? bookOf(store) : [];
}

const unprocessable = (message: string) => ({
  status: 422,
  body: {
    message: 'Invalid request.',
    errors: [message],
    documentation_url: 'https://docs.github.com/rest/checks/runs#create-a-check-run',
    status: '422',
  },
});

/** GitHub's answer to an installation token without the permission the endpoint needs. */
const notAccessible = () => error(403, 'Resource not accessible by integration');

/** `checks: write` (POST) or `checks: read` (GET), as GitHub checks it for an installation token. */
function permitted(deps: RestDeps, ctx: RequestContext, level: 'read' | 'write'): boolean {
  const principal = ctx.principal;
  // Only a GitHub App may create check runs; a person's token may read them.
  if (principal?.kind !== 'installation') return level === 'read';
  return allows(permissionsOf(deps.store, principal.installation), 'checks', level);
}

function knownShas(deps: RestDeps, repo: Repo): Set<string> {
  const shas = new Set<string>();
  for (const run of deps.store.runs.values()) if (run.repo === repo) shas.add(run.headSha);
  return shas;
}

function checkRunBody(deps: RestDeps, run: StoredCheckRun) {
  const api = `${deps.urls.api}/repos/${run.repo.fullName}/check-runs/${run.id}`;
  const installation = run.installationId
    ? deps.store.installations.get(run.installationId)
    : undefined;
  return {
    id: run.id,
    head_sha: run.headSha,
    node_id: nodeId('CR', run.id),
    external_id: run.externalId,
    url: api,
    html_url: `${deps.urls.web}/${run.repo.fullName}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: isoSeconds(run.startedAt),
    completed_at: run.completedAt === null ? null : isoSeconds(run.completedAt),
    output: {
      title: run.title,
      summary: run.summary,
      text: run.text,
      annotations_count: 0,
      annotations_url: `${api}/annotations`,
    },
    name: run.name,
    check_suite: null,
    // The App's owner is not modelled; the installing account stands in for it.
    app: installation
      ? {
          id: 1,
          slug: 'runner-medic',
          node_id: nodeId('A', 1),
          client_id: 'Iv1.runnermedic',
          owner: userBody(installation.account, deps.urls),
          name: 'runner-medic',
          description: 'Rescues GitHub Actions jobs whose self-hosted ARC runner pods die',
          external_url: `${deps.urls.web}/apps/runner-medic`,
          html_url: `${deps.urls.web}/apps/runner-medic`,
          created_at: isoSeconds(0),
          updated_at: isoSeconds(0),
          permissions: permissionsOf(deps.store, installation),
          events: ['workflow_job', 'workflow_run'],
        }
      : null,
    pull_requests: [],
  };
}

function timeOf(value: unknown, fallback: number): number | 'bad' {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') return 'bad';
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : 'bad';
}

/**
 * The Checks API's check runs, as runner-medic uses them: create, read one, list a commit's.
 * Enforced as GitHub does (docs.github.com/rest/checks/runs): an installation token with
 * `checks: write` to create, `conclusion` required once `completed`, the commit must exist,
 * output capped at 65,535 characters; `filter=latest` (the default) lists only the newest
 * check run of each name.
 */
export function checkRunRoutes(deps: RestDeps): Route[] {
  const book = bookOf(deps.store);
  const now = () => deps.store.clock.now();
  return [
    {
      method: 'POST',
      path: '/repos/{owner}/{repo}/check-runs',
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        if (!permitted(deps, ctx, 'write')) return notAccessible();
        const body = (ctx.body ?? {}) as Record<string, unknown>;
        const { name, head_sha: headSha, external_id: externalId } = body;
        const status = body['status'] ?? 'queued';
        const conclusion = body['conclusion'] ?? null;
        const output = body['output'] as Record<string, unknown> | undefined;
        if (typeof name !== 'string' || name === '') return unprocessable('name is missing');
        if (typeof headSha !== 'string') return unprocessable('head_sha is missing');
        if (externalId !== undefined && typeof externalId !== 'string')
          return unprocessable('external_id is not a string');
        if (typeof status !== 'string' || !STATUSES.includes(status))
          return unprocessable(`status is not one of ${STATUSES.join(', ')}`);
        if (
          conclusion !== null &&
          (typeof conclusion !== 'string' || !CONCLUSIONS.includes(conclusion))
        )
          return unprocessable(`conclusion is not one of ${CONCLUSIONS.join(', ')}`);
        const completed = status === 'completed' || body['completed_at'] !== undefined;
        if (completed && conclusion === null)
          return unprocessable('conclusion is required when the check run is completed');
        if (output !== undefined) {
          if (typeof output['title'] !== 'string' || typeof output['summary'] !== 'string')
            return unprocessable('output needs a title and a summary');
          for (const field of ['summary', 'text'])
            if (
              typeof output[field] === 'string' &&
              (output[field] as string).length > MAX_OUTPUT_CHARS
            )
              return unprocessable(`output.${field} is longer than ${MAX_OUTPUT_CHARS} characters`);
        }
        if (!knownShas(deps, repo).has(headSha))
          return unprocessable(`No commit found for SHA: ${headSha}`);
        const startedAt = timeOf(body['started_at'], now());
        const completedAt = completed ? timeOf(body['completed_at'], now()) : null;
        if (startedAt === 'bad' || completedAt === 'bad')
          return unprocessable('started_at and completed_at are ISO 8601 timestamps');
        const principal = ctx.principal;
        const run: StoredCheckRun = {
          id: CHECK_RUN_ID_BASE + book.length + 1,
          repo,
          headSha,
          name,
          externalId: typeof externalId === 'string' ? externalId : null,
          detailsUrl: typeof body['details_url'] === 'string' ? body['details_url'] : null,
          status: completed ? 'completed' : status,
          conclusion: completed ? (conclusion as string) : null,
          startedAt,
          completedAt,
          title: typeof output?.['title'] === 'string' ? output['title'] : null,
          summary: typeof output?.['summary'] === 'string' ? output['summary'] : null,
          text: typeof output?.['text'] === 'string' ? output['text'] : null,
          installationId: principal?.kind === 'installation' ? principal.installation.id : null,
          createdAt: now(),
        };
        // Kept out of the model's audit log, which counts the calls that rescue jobs.
        book.push(run);
        return { status: 201, body: checkRunBody(deps, run) };
      },
    },
    {
      method: 'GET',
      path: '/repos/{owner}/{repo}/check-runs/{check_run_id}',
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        if (!permitted(deps, ctx, 'read')) return notAccessible();
        const run = book.find(
          (r) => r.repo === repo && r.id === Number(ctx.params['check_run_id']),
        );
        return run ? { status: 200, body: checkRunBody(deps, run) } : error(404, 'Not Found');
      },
    },
    {
      method: 'GET',
      path: '/repos/{owner}/{repo}/commits/{ref}/check-runs',
      auth: 'token',
      handler: (ctx) => {
        const repo = visibleRepo(deps, ctx);
        if (isResponse(repo)) return repo;
        if (!permitted(deps, ctx, 'read')) return notAccessible();
        const name = ctx.query.get('check_name');
        const status = ctx.query.get('status');
        const filter = ctx.query.get('filter') ?? 'latest';
        if (filter !== 'latest' && filter !== 'all')
          return unprocessable('filter is latest or all');
        let runs = book
          .filter((r) => r.repo === repo && r.headSha === ctx.params['ref'])
          .filter((r) => !name || r.name === name)
          .filter((r) => !status || r.status === status)
          .sort((a, b) => b.id - a.id);
        if (filter === 'latest') {
          const seen = new Set<string>();
          runs = runs.filter((r) => !seen.has(r.name) && seen.add(r.name) !== undefined);
        }
        const { page, headers } = paginate(ctx, runs);
        return {
          status: 200,
          headers,
          body: { total_count: runs.length, check_runs: page.map((r) => checkRunBody(deps, r)) },
        };
      },
    },
  ];
}
