import * as z from 'zod';
import type {
  CheckRunPublisher,
  CheckRunRequest,
  PublishedCheckRun,
  RunHead,
} from '../../ports/check-runs.js';
import { CHECK_RUN_NAME } from '../../ports/check-runs.js';
import type { RepoRef } from '../../ports/github-gateway.js';
import type { GatewayOctokit, OctokitFactoryOptions } from './octokit-factory.js';
import { OctokitFactory } from './octokit-factory.js';
import { installationSchema, parseBody } from './github-responses.js';
import { requestFailureOf } from './request-failure.js';
import { PER_PAGE, asSent, ownEachPage } from './pages.js';
import { once, own } from './retry-budget.js';
import { RunnerMedicError } from '../../ports/errors.js';

const runHeadSchema = z.object({ head_sha: z.string().min(1), html_url: z.string() });
const checkRunsPageSchema = z.object({
  total_count: z.number(),
  check_runs: z.array(z.object({ id: z.number(), external_id: z.string().nullable() })),
});
const createdSchema = z.object({ id: z.number() });

/** More than this many runner-medic check runs on one commit is not looked through. */
const MAX_PAGES = 10;

/**
 * runner-medic's check runs through octokit as the GitHub App (`checks: write`). One octokit per
 * installation, as the gateway's; a repository named without an installation id is looked up
 * once (`GET /repos/{owner}/{repo}/installation`).
 */
export class OctokitCheckRunPublisher implements CheckRunPublisher {
  private readonly octokits: OctokitFactory;
  private readonly installations = new Map<string, Promise<number>>();

  constructor(options: OctokitFactoryOptions) {
    this.octokits = new OctokitFactory(options);
  }

  async runHead(ref: RepoRef, runId: number): Promise<RunHead | null> {
    const { octokit, owner, repo } = await this.target(ref);
    try {
      const response = await octokit.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', {
        ...own(),
        owner,
        repo,
        run_id: runId,
      });
      const run = parseBody(runHeadSchema, response.data, `read run ${runId} of ${ref.repo}`);
      return { headSha: run.head_sha, htmlUrl: run.html_url };
    } catch (error) {
      if (requestFailureOf(error)?.status === 404) return null;
      throw error;
    }
  }

  async publish(request: CheckRunRequest): Promise<PublishedCheckRun> {
    const { octokit, owner, repo } = await this.target(request.ref);
    const existing = await this.find(octokit, owner, repo, request.headSha, request.externalId);
    if (existing !== null) return { id: existing, created: false };
    // Sent once: after an ambiguous answer the next attempt finds the check run by its external id.
    const response = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      ...once(),
      owner,
      repo,
      name: CHECK_RUN_NAME,
      head_sha: request.headSha,
      external_id: request.externalId,
      details_url: request.detailsUrl,
      status: 'completed',
      conclusion: 'neutral',
      completed_at: new Date(request.completedAt).toISOString(),
      output: { title: request.title, summary: request.summary },
    });
    const what = `create a check run on ${request.headSha} in ${request.ref.repo}`;
    return { id: parseBody(createdSchema, response.data, what).id, created: true };
  }

  /**
   * A `runner-medic` check run on the commit with this external id. `filter=all`: GitHub's
   * default (`latest`) keeps only the newest check run per name, and one commit may carry several.
   */
  private async find(
    octokit: GatewayOctokit,
    owner: string,
    repo: string,
    sha: string,
    externalId: string,
  ): Promise<number | null> {
    const pages = octokit.paginate.iterator(ownEachPage(octokit.rest.checks.listForRef), {
      owner,
      repo,
      ref: sha,
      check_name: CHECK_RUN_NAME,
      filter: 'all',
      per_page: PER_PAGE,
    });
    let page = 0;
    for await (const response of pages) {
      const { check_runs: runs } = parseBody(
        checkRunsPageSchema,
        asSent(response.data, 'check_runs'),
        `list check runs of ${sha} in ${owner}/${repo}`,
      );
      const match = runs.find((r) => r.external_id === externalId);
      if (match) return match.id;
      if (++page >= MAX_PAGES) return null;
    }
    return null;
  }

  private async target(
    ref: RepoRef,
  ): Promise<{ octokit: GatewayOctokit; owner: string; repo: string }> {
    const [owner, repo] = ref.repo.split('/');
    if (!owner || !repo) throw new RunnerMedicError('bug', `not owner/name: ${ref.repo}`);
    const id = ref.installationId ?? (await this.installationOf(owner, repo));
    return { octokit: this.octokits.forInstallation(id), owner, repo };
  }

  private installationOf(owner: string, repo: string): Promise<number> {
    const key = `${owner}/${repo}`;
    let id = this.installations.get(key);
    if (!id) {
      id = this.octokits
        .forApp()
        .request('GET /repos/{owner}/{repo}/installation', { ...own(), owner, repo })
        .then(
          (response) =>
            parseBody(installationSchema, response.data, `find the App installation for ${key}`).id,
        );
      id.catch(() => this.installations.delete(key));
      this.installations.set(key, id);
    }
    return id;
  }
}
