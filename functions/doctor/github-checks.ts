import { readFile } from 'node:fs/promises';
import type { GatewayOctokit, OctokitFactory } from '../adapters/github/octokit-factory.js';
import { asSent, PER_PAGE } from '../adapters/github/pages.js';
import { requestFailureOf } from '../adapters/github/request-failure.js';
import type { WebhookDeliveryAttempt } from '../ports/github-gateway.js';
import type { CheckResult } from './doctor-check.js';
import { describeError, failed, finding, listed, ok, unreachable } from './doctor-check.js';

/** The App's permissions and events as runner-medic needs them: the App manifest it ships. */
export interface AppNeeds {
  manifest: string;
  permissions: Record<string, string>;
  events: string[];
}

/**
 * infra/github-app/manifest-org.json, or manifest-repo.json when some scale set registers its
 * runners on a repository (it adds `administration: write`).
 */
async function readAppNeeds(repositoryRunners: boolean): Promise<AppNeeds> {
  const manifest = `infra/github-app/manifest-${repositoryRunners ? 'repo' : 'org'}.json`;
  const manifestUrl = new URL(`../../${manifest}`, import.meta.url);
  const document = JSON.parse(await readFile(manifestUrl, 'utf8')) as {
    default_permissions: Record<string, string>;
    default_events: string[];
  };
  return { manifest, permissions: document.default_permissions, events: document.default_events };
}

export interface Installation {
  id: number;
  account: string;
  accountType: string;
  permissions: Record<string, string>;
  events: string[];
}

const LEVELS: Record<string, number> = { read: 1, write: 2, admin: 3 };

/** What runner-medic cannot do without each permission, for the finding's text. */
const WITHOUT: Record<string, string> = {
  actions: 're-run or cancel jobs',
  checks:
    'explain its actions with a check run on the job’s commit (write), or read annotations to tell a lost runner from a failed job (read)',
  organization_self_hosted_runners: 'remove registrations left by dead org runners',
  administration: 'remove registrations left by dead repository runners',
  metadata: 'read repositories at all',
};

/** "without checks: it cannot …" for the permissions named in `missing` (missingGrants' lines). */
function consequencesOf(missing: readonly string[]): string[] {
  const permissions = new Set(missing.map((m) => m.split(':')[0] ?? ''));
  return [...permissions]
    .filter((p) => WITHOUT[p] !== undefined)
    .map((p) => `without ${p} it cannot ${WITHOUT[p]}`);
}

/** What one installation lacks of what the code needs: `checks: read (needs write)`, `event workflow_run`. */
export function missingGrants(installation: Installation, needs: AppNeeds): string[] {
  const missing: string[] = [];
  for (const [permission, level] of Object.entries(needs.permissions)) {
    const granted = installation.permissions[permission];
    if ((LEVELS[granted ?? ''] ?? 0) < (LEVELS[level] ?? 0))
      missing.push(`${permission}: ${granted ?? 'none'} (needs ${level})`);
  }
  for (const event of needs.events)
    if (!installation.events.includes(event)) missing.push(`event ${event}`);
  return missing;
}

/** Failed deliveries grouped by status code (0: GitHub could not connect), e.g. `{ "0": 3, "500": 1 }`. */
export function failuresByStatus(
  attempts: readonly WebhookDeliveryAttempt[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of attempts) {
    if (a.statusCode >= 200 && a.statusCode < 300) continue;
    const key = String(a.statusCode);
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** GitHub answered (a 4xx): a finding about the set-up; anything else means it was not reached. */
export function answeredByGithub(error: unknown): boolean {
  const failure = requestFailureOf(error);
  return failure !== undefined && failure.status >= 400 && failure.status < 500;
}

function githubProblem(id: string, what: string, error: unknown): CheckResult {
  return answeredByGithub(error)
    ? finding(
        id,
        `GitHub refused to ${what}: ${describeError(error)}.`,
        'Check the App id and private key, and that the App is installed.',
      )
    : unreachable(
        id,
        `Cannot reach GitHub to ${what}: ${describeError(error)}.`,
        'Check GITHUB_API_URL and the network path to GitHub.',
      );
}

/**
 * Every item of a GitHub list, through octokit's paginate iterator (at most 100 pages). `key` is
 * the list's field in a `{total_count, <key>: [...]}` body, so `pick` reads the body as sent.
 */
async function pages<T>(
  octokit: GatewayOctokit,
  route: string,
  key: string | null,
  pick: (data: unknown) => T[],
  parameters: Record<string, unknown> = {},
): Promise<T[]> {
  const all: T[] = [];
  let read = 0;
  const iterator = octokit.paginate.iterator(route, { ...parameters, per_page: PER_PAGE });
  for await (const response of iterator) {
    all.push(...pick(key === null ? response.data : asSent(response.data, key)));
    if (++read >= 100) break;
  }
  return all;
}

function installationOf(raw: unknown): Installation {
  const i = raw as {
    id: number;
    account?: { login?: string; type?: string } | null;
    permissions?: Record<string, string>;
    events?: string[];
  };
  return {
    id: i.id,
    account: i.account?.login ?? String(i.id),
    accountType: i.account?.type ?? 'Organization',
    permissions: i.permissions ?? {},
    events: i.events ?? [],
  };
}

export interface GithubView {
  checks: CheckResult[];
  installations: Installation[];
}

/** The App's installations, their grants against the manifest, and the last hour's deliveries. */
export async function checkGithubApp(options: {
  octokits: OctokitFactory;
  listDeliveries: (since: number) => Promise<WebhookDeliveryAttempt[]>;
  now: number;
  /** Some scale set registers runners on a repository rather than an organisation. */
  repositoryRunners: boolean;
}): Promise<GithubView> {
  const checks: CheckResult[] = [];
  let installations: Installation[] = [];
  try {
    installations = (
      await pages(options.octokits.forApp(), 'GET /app/installations', null, (d) => d as unknown[])
    ).map(installationOf);
  } catch (error) {
    checks.push(githubProblem('github.installations', 'list the App’s installations', error));
    return { checks, installations };
  }
  if (installations.length === 0) {
    checks.push(
      finding(
        'github.installations',
        'The App is installed nowhere: it receives no workflow_job events and cannot act on any repository.',
        'Install the App on each organisation whose jobs run on your ARC scale sets.',
      ),
    );
  } else {
    checks.push(
      ok(
        'github.installations',
        `Installed on ${installations.length}: ${listed(installations.map((i) => i.account))}.`,
      ),
    );
    const needs = await readAppNeeds(options.repositoryRunners);
    const short = installations
      .map((i) => ({ account: i.account, missing: missingGrants(i, needs) }))
      .filter((i) => i.missing.length > 0);
    checks.push(
      short.length > 0
        ? finding(
            'github.permissions',
            `Installations lack what runner-medic's calls need (${needs.manifest}): ${short
              .map((i) => `${i.account}: ${i.missing.join(', ')}`)
              .join('; ')}; ${consequencesOf(short.flatMap((i) => i.missing)).join('; ')}.`,
            'Grant the permissions and events on the App’s settings page, then have each organisation owner accept them.',
          )
        : ok(
            'github.permissions',
            `Every installation grants the permissions and events in ${needs.manifest}.`,
          ),
    );
  }

  const hourAgo = options.now - 3_600_000;
  try {
    const attempts = await options.listDeliveries(hourAgo);
    const failures = failuresByStatus(attempts);
    const failedCount = Object.values(failures).reduce((a, b) => a + b, 0);
    const byStatus = Object.entries(failures)
      .map(([status, n]) => `${n} × ${status === '0' ? 'no connection' : status}`)
      .join(', ');
    checks.push(
      failedCount > 0
        ? finding(
            'github.webhook-deliveries',
            `${failedCount} of ${attempts.length} webhook deliveries in the last hour failed (${byStatus}): the engine missed those job events until the sweep catches up.`,
            'Check the webhook URL on the App (the WebhookUrl output) and the webhook function’s logs; the sweep redelivers failed deliveries.',
          )
        : ok(
            'github.webhook-deliveries',
            attempts.length === 0
              ? 'No webhook deliveries in the last hour (no job events to deliver).'
              : `All ${attempts.length} webhook deliveries of the last hour succeeded.`,
          ),
    );
  } catch (error) {
    checks.push(githubProblem('github.webhook-deliveries', 'list webhook deliveries', error));
  }
  return { checks, installations };
}

/** A self-hosted runner registration, as GitHub lists it for an organisation. */
interface Registration {
  name: string;
  labels: string[];
  status: string;
}

/**
 * Registrations on GitHub of ARC's scale sets (a label names a scale set the clusters run) with
 * no EphemeralRunner of that name in any configured cluster: each holds a runner slot that no pod
 * will ever use.
 */
export async function checkOrphanRegistrations(options: {
  octokits: OctokitFactory;
  installations: readonly Installation[];
  scaleSets: ReadonlySet<string>;
  runnerNames: ReadonlySet<string>;
  clustersRead: boolean;
}): Promise<CheckResult> {
  const id = 'github.orphan-registrations';
  if (!options.clustersRead) {
    return failed(
      id,
      'Not checked: the runners of every configured cluster must be read first (see the cluster checks).',
      'Fix the cluster checks, then run the doctor again.',
    );
  }
  const orphans: string[] = [];
  for (const installation of options.installations) {
    if (installation.accountType !== 'Organization') continue;
    let registrations: Registration[];
    try {
      registrations = await pages(
        options.octokits.forInstallation(installation.id),
        'GET /orgs/{org}/actions/runners',
        'runners',
        (d) =>
          (
            d as { runners: { name: string; status: string; labels: { name: string }[] }[] }
          ).runners.map((r) => ({
            name: r.name,
            status: r.status,
            labels: r.labels.map((l) => l.name),
          })),
        { org: installation.account },
      );
    } catch (error) {
      return githubProblem(id, `list the runners of ${installation.account}`, error);
    }
    for (const r of registrations) {
      const arcRunner = r.labels.some((l) => options.scaleSets.has(l.toLowerCase()));
      if (arcRunner && !options.runnerNames.has(r.name))
        orphans.push(`${installation.account}/${r.name} (${r.status})`);
    }
  }
  return orphans.length > 0
    ? finding(
        id,
        `${orphans.length} runner registrations of your scale sets have no EphemeralRunner in any configured cluster: ${listed(orphans)}. GitHub counts them against the scale set, and a job assigned to one waits for a runner that never comes.`,
        'Let runner-medic’s orphanRegistration rule remove them (it is on by default), or delete them under the organisation’s Settings → Actions → Runners.',
      )
    : ok(id, 'Every registration of your scale sets has its EphemeralRunner.');
}

export interface QueuedJob {
  repo: string;
  id: number;
  labels: string[];
  createdAt: number;
}

/** Queued jobs of the given repositories (of all repositories of each installation without). */
export async function listQueuedJobs(options: {
  octokits: OctokitFactory;
  installations: readonly Installation[];
  repositories: readonly string[] | undefined;
}): Promise<QueuedJob[]> {
  const jobs: QueuedJob[] = [];
  for (const installation of options.installations) {
    const octokit = options.octokits.forInstallation(installation.id);
    const repos =
      options.repositories?.filter((r) => r.split('/')[0] === installation.account) ??
      (await pages(octokit, 'GET /installation/repositories', 'repositories', (d) =>
        (d as { repositories: { full_name: string }[] }).repositories.map((r) => r.full_name),
      ));
    for (const repo of repos) {
      const [owner, name] = repo.split('/');
      // A run with one job running and another still queued is `in_progress`: read both.
      const runs: number[] = [];
      for (const status of ['queued', 'in_progress'])
        runs.push(
          ...(await pages(
            octokit,
            'GET /repos/{owner}/{repo}/actions/runs',
            'workflow_runs',
            (d) => (d as { workflow_runs: { id: number }[] }).workflow_runs.map((r) => r.id),
            { owner, repo: name, status },
          )),
        );
      for (const runId of runs) {
        const runJobs = await pages(
          octokit,
          'GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs',
          'jobs',
          (d) =>
            (d as { jobs: { id: number; status: string; labels: string[]; created_at: string }[] })
              .jobs,
          { owner, repo: name, run_id: runId },
        );
        for (const job of runJobs)
          if (job.status === 'queued')
            jobs.push({
              repo,
              id: job.id,
              labels: job.labels,
              createdAt: Date.parse(job.created_at),
            });
      }
    }
  }
  return jobs;
}

/** Jobs queued longer than `minutes` for each of a cluster's scale sets (by runs-on label). */
export function checkQueuedJobs(
  id: string,
  scaleSets: readonly string[],
  jobs: readonly QueuedJob[],
  now: number,
  minutes: number,
): CheckResult {
  const late = scaleSets
    .map((set) => ({
      set,
      jobs: jobs.filter(
        (j) =>
          j.labels.some((l) => l.toLowerCase() === set.toLowerCase()) &&
          now - j.createdAt > minutes * 60_000,
      ),
    }))
    .filter((s) => s.jobs.length > 0);
  return late.length > 0
    ? finding(
        id,
        `Jobs queued for more than ${minutes} minutes: ${late
          .map(
            (s) =>
              `${s.set}: ${s.jobs.length} (${listed(
                s.jobs.map((j) => `${j.repo}#${j.id}`),
                3,
              )})`,
          )
          .join('; ')}. The scale set is not starting runners for them.`,
        'Look at the scale set’s listener and EphemeralRunners (maxRunners, pod admission, node capacity); runner-medic’s starvingQueue rule reports such jobs.',
      )
    : ok(
        id,
        `No job queued for more than ${minutes} minutes on ${listed(scaleSets) || 'no scale set'}.`,
      );
}
