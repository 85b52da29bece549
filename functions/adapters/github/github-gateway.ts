import type { JobAnnotation } from '../../domain/classify/annotations.js';
import type { RunnerRegistration } from '../../domain/model/facts.js';
import type { JobFacts, RunFacts } from '../../domain/model/observation.js';
import type { Clock } from '../../ports/clock.js';
import { systemClock } from '../../ports/clock.js';
import type {
  AttemptPrecondition,
  GithubGateway,
  GithubMutation,
  RepoRef,
  RunnerOwner,
  RunnerVersionDeprecation,
  WebhookDeliveryAttempt,
} from '../../ports/github-gateway.js';
import {
  githubJobSchema,
  githubRunSchema,
  toJobFacts,
  toRunFacts,
} from '../../domain/model/github-objects.js';
import { GithubRequestError, GithubResponseError } from './github-errors.js';
import {
  annotationsPageSchema,
  deliveriesPageSchema,
  deprecationSchema,
  installationSchema,
  jobsPageSchema,
  parseBody,
  runnerSchema,
  runnersPageSchema,
  toDeliveryAttempt,
  toRunnerRegistration,
} from './github-responses.js';
import { refusalOutcome } from './mutation-outcome.js';
import { PER_PAGE, asSent, hasNextPage, ownEachPage } from './pages.js';
import { RateLimitBook } from './rate-limit-book.js';
import { once, own } from './retry-budget.js';
import type { GatewayOctokit, OctokitFactoryOptions } from './octokit-factory.js';
import { OctokitFactory } from './octokit-factory.js';
import {
  isAuthPath,
  isRateLimit,
  requestFailureOf,
  unavailableOrRequestError,
} from './request-failure.js';
import {
  installationReposPageSchema,
  runsPageSchema,
  toRepositoryRef,
} from './repository-responses.js';

/** A list longer than this many pages is no list runner-medic should read in one invocation. */
const MAX_PAGES = 1000;

export interface GithubGatewayOptions extends OctokitFactoryOptions {
  /** Reads `x-ratelimit-reset` against it. @default the system clock */
  clock?: Clock;
  /** Share of an installation's hourly rate limit the sweep's observe calls may spend. @default 0.05 */
  observeShare?: number;
}

const OBSERVE_SHARE = 0.05;

/** A client for one installation; `forget` drops a looked-up installation id that failed. */
interface Scope {
  octokit: GatewayOctokit;
  forget: () => void;
}

interface Target extends Scope {
  owner: string;
  repo: string;
}

/**
 * runner-medic's GitHub, through octokit as a GitHub App: retry (never 403/409/422), throttling
 * that waits only when the wait fits the invocation, one cached octokit per installation.
 */
export class OctokitGithubGateway implements GithubGateway {
  private readonly octokits: OctokitFactory;
  private readonly clock: Clock;
  /** Installation id per account login, for refs that arrive without one. */
  private readonly installationIds = new Map<string, Promise<number>>();

  private readonly rateLimits: RateLimitBook;

  constructor(options: GithubGatewayOptions) {
    this.clock = options.clock ?? systemClock;
    this.rateLimits = new RateLimitBook(options.observeShare ?? OBSERVE_SHARE, this.clock);
    this.octokits = new OctokitFactory({ ...options, rateLimits: this.rateLimits });
  }

  async observe<T>(installationId: number, read: () => Promise<T>): Promise<T | null> {
    if (!this.rateLimits.current(installationId)) await this.learnRateLimit(installationId);
    if (!this.rateLimits.allowsObserve(installationId)) return null;
    return RateLimitBook.observing(read);
  }

  budgetUsed(installationId: number): number | null {
    return this.rateLimits.usedPercent(installationId);
  }

  /**
   * `GET /rate_limit`, which does not count against GitHub's limit but is counted in the observe
   * share; a failure leaves it unknown.
   */
  private async learnRateLimit(installationId: number): Promise<void> {
    try {
      const { data } = await this.octokits
        .forInstallation(checkedId(installationId))
        .rest.rateLimit.get(own());
      const core = data.resources.core;
      this.rateLimits.note(installationId, {
        'x-ratelimit-limit': core.limit,
        'x-ratelimit-remaining': core.remaining,
        'x-ratelimit-reset': core.reset,
      });
      this.rateLimits.countObserve(installationId);
    } catch {
      // Unknown: the observe call is skipped this time (an act call would learn it too).
    }
  }

  async rerunJob(
    ref: RepoRef,
    jobId: number,
    expected: AttemptPrecondition,
  ): Promise<GithubMutation> {
    const t = await this.target(ref);
    return this.mutateRun(t, ref, expected, 'rerun', `rerun job ${jobId} in ${ref.repo}`, () =>
      t.octokit.rest.actions.reRunJobForWorkflowRun({
        ...once(),
        owner: t.owner,
        repo: t.repo,
        job_id: checkedId(jobId),
      }),
    );
  }

  async rerunFailedJobs(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation> {
    const t = await this.target(ref);
    const what = `rerun failed jobs of run ${expected.runId} in ${ref.repo}`;
    return this.mutateRun(t, ref, expected, 'rerun', what, () =>
      t.octokit.rest.actions.reRunWorkflowFailedJobs({
        ...once(),
        owner: t.owner,
        repo: t.repo,
        run_id: checkedId(expected.runId),
      }),
    );
  }

  async cancelRun(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation> {
    const t = await this.target(ref);
    const what = `cancel run ${expected.runId} in ${ref.repo}`;
    return this.mutateRun(t, ref, expected, 'cancel', what, () =>
      t.octokit.rest.actions.cancelWorkflowRun({
        ...once(),
        owner: t.owner,
        repo: t.repo,
        run_id: checkedId(expected.runId),
      }),
    );
  }

  async forceCancelRun(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation> {
    const t = await this.target(ref);
    const what = `force-cancel run ${expected.runId} in ${ref.repo}`;
    return this.mutateRun(t, ref, expected, 'cancel', what, () =>
      t.octokit.rest.actions.forceCancelWorkflowRun({
        ...once(),
        owner: t.owner,
        repo: t.repo,
        run_id: checkedId(expected.runId),
      }),
    );
  }

  async getJob(ref: RepoRef, jobId: number): Promise<JobFacts | null> {
    const t = await this.target(ref);
    const what = `get job ${jobId} in ${ref.repo}`;
    const response = await this.read(t, what, () =>
      t.octokit.rest.actions.getJobForWorkflowRun({
        ...own(),
        owner: t.owner,
        repo: t.repo,
        job_id: checkedId(jobId),
      }),
    );
    return response && toJobFacts(parseBody(githubJobSchema, response.data, what));
  }

  async getRun(ref: RepoRef, runId: number): Promise<RunFacts | null> {
    const t = await this.target(ref);
    const what = `get run ${runId} in ${ref.repo}`;
    const response = await this.read(t, what, () =>
      t.octokit.rest.actions.getWorkflowRun({
        ...own(),
        owner: t.owner,
        repo: t.repo,
        run_id: checkedId(runId),
      }),
    );
    return response && toRunFacts(parseBody(githubRunSchema, response.data, what));
  }

  async listJobs(ref: RepoRef, runId: number): Promise<JobFacts[]> {
    const t = await this.target(ref);
    const what = `list jobs of run ${runId} in ${ref.repo}`;
    const pages = t.octokit.paginate.iterator(
      ownEachPage(t.octokit.rest.actions.listJobsForWorkflowRun),
      {
        owner: t.owner,
        repo: t.repo,
        run_id: checkedId(runId),
        filter: 'latest',
        per_page: PER_PAGE,
      },
    );
    return this.listAll(t, what, pages, (data) =>
      parseBody(jobsPageSchema, asSent(data, 'jobs'), what).jobs.map(toJobFacts),
    );
  }

  async listAnnotations(ref: RepoRef, jobId: number): Promise<JobAnnotation[]> {
    const t = await this.target(ref);
    const what = `list annotations of job ${jobId} in ${ref.repo}`;
    const pages = t.octokit.paginate.iterator(ownEachPage(t.octokit.rest.checks.listAnnotations), {
      owner: t.owner,
      repo: t.repo,
      check_run_id: checkedId(jobId),
      per_page: PER_PAGE,
    });
    return this.listAll(t, what, pages, (data) => parseBody(annotationsPageSchema, data, what));
  }

  async listRunners(
    owner: RunnerOwner,
    installationId: number | null,
  ): Promise<RunnerRegistration[]> {
    const { id, ...t } = await this.scope(owner, installationId);
    const { actions } = t.octokit.rest;
    const what = `list runners of ${describe(owner)}`;
    const perPage = { per_page: PER_PAGE };
    const pages =
      'org' in owner
        ? t.octokit.paginate.iterator(ownEachPage(actions.listSelfHostedRunnersForOrg), {
            org: owner.org,
            ...perPage,
          })
        : t.octokit.paginate.iterator(ownEachPage(actions.listSelfHostedRunnersForRepo), {
            owner: splitRepo(owner.repo)[0],
            repo: splitRepo(owner.repo)[1],
            ...perPage,
          });
    return this.listAll(t, what, pages, (data) =>
      parseBody(runnersPageSchema, asSent(data, 'runners'), what).runners.map((runner) =>
        toRunnerRegistration(runner, owner, id),
      ),
    );
  }

  async listRunnersPage(owner: RunnerOwner, installationId: number, page: number) {
    const { id, ...t } = await this.scope(owner, installationId);
    const { actions } = t.octokit.rest;
    const what = `list runners of ${describe(owner)}, page ${page}`;
    const at = { ...own(), per_page: PER_PAGE, page: checkedId(page) };
    const response = await this.read(t, what, () =>
      'org' in owner
        ? actions.listSelfHostedRunnersForOrg({ ...at, org: owner.org })
        : actions.listSelfHostedRunnersForRepo({
            ...at,
            owner: splitRepo(owner.repo)[0],
            repo: splitRepo(owner.repo)[1],
          }),
    );
    if (!response) return { registrations: [], last: true };
    const body = parseBody(runnersPageSchema, response.data, what);
    return {
      registrations: body.runners.map((runner) => toRunnerRegistration(runner, owner, id)),
      last: !hasNextPage(response.headers.link),
    };
  }

  async getRunnerRegistration(owner: RunnerOwner, installationId: number, runnerId: number) {
    const { id, ...t } = await this.scope(owner, installationId);
    const { actions } = t.octokit.rest;
    const what = `get runner ${runnerId} of ${describe(owner)}`;
    const response = await this.read(t, what, () =>
      'org' in owner
        ? actions.getSelfHostedRunnerForOrg({
            ...own(),
            org: owner.org,
            runner_id: checkedId(runnerId),
          })
        : actions.getSelfHostedRunnerForRepo({
            ...own(),
            owner: splitRepo(owner.repo)[0],
            repo: splitRepo(owner.repo)[1],
            runner_id: checkedId(runnerId),
          }),
    );
    return (
      response && toRunnerRegistration(parseBody(runnerSchema, response.data, what), owner, id)
    );
  }

  async deleteRunner(
    owner: RunnerOwner,
    installationId: number | null,
    runnerId: number,
  ): Promise<GithubMutation> {
    const t = await this.scope(owner, installationId);
    const octokit = t.octokit;
    return this.mutate(t, `delete runner ${runnerId} of ${describe(owner)}`, () => {
      if ('org' in owner) {
        return octokit.rest.actions.deleteSelfHostedRunnerFromOrg({
          ...own(),
          org: owner.org,
          runner_id: checkedId(runnerId),
        });
      }
      const [o, r] = splitRepo(owner.repo);
      return octokit.rest.actions.deleteSelfHostedRunnerFromRepo({
        ...own(),
        owner: o,
        repo: r,
        runner_id: checkedId(runnerId),
      });
    });
  }

  async listDeliveryAttempts(since: number, afterId?: number): Promise<WebhookDeliveryAttempt[]> {
    const app = this.octokits.forApp();
    const what = 'list webhook deliveries';
    const out: WebhookDeliveryAttempt[] = [];
    const listing = app.paginate.iterator(ownEachPage(app.rest.apps.listWebhookDeliveries), {
      per_page: PER_PAGE,
    });
    const pages = listing[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<{ data: unknown }>;
      try {
        next = await pages.next();
      } catch (error) {
        throw unavailableOrRequestError(error, what, this.clock.now());
      }
      if (next.done) return out;
      const page = parseBody(deliveriesPageSchema, next.value.data, what).map(toDeliveryAttempt);
      const newer = afterId === undefined ? page : page.filter((d) => d.id > afterId);
      out.push(...newer.filter((d) => d.deliveredAt >= since));
      // Newest first: once a page reaches back past `since` (or the attempt already read), the
      // pages after it are older still.
      const oldest = page.at(-1);
      if (!oldest || oldest.deliveredAt < since || newer.length < page.length) return out;
    }
  }

  async redeliver(attemptId: number): Promise<GithubMutation> {
    const app = this.octokits.forApp();
    const scope: Scope = { octokit: app, forget: () => undefined };
    return this.mutate(scope, `redeliver webhook delivery ${attemptId}`, () =>
      app.rest.apps.redeliverWebhookDelivery({ ...own(), delivery_id: checkedId(attemptId) }),
    );
  }

  async listInstallationRepositories(installationId: number, page: number) {
    const octokit = this.octokits.forInstallation(checkedId(installationId));
    const scope: Scope = { octokit, forget: () => undefined };
    const what = `list repositories of installation ${installationId}`;
    const response = await this.read(scope, what, () =>
      octokit.rest.apps.listReposAccessibleToInstallation({
        ...own(),
        per_page: PER_PAGE,
        page: checkedId(page),
      }),
    );
    if (!response) return { repositories: [], last: true };
    const body = parseBody(installationReposPageSchema, response.data, what);
    return {
      repositories: body.repositories.map(toRepositoryRef),
      last: !hasNextPage(response.headers.link),
    };
  }

  async listQueuedRuns(ref: RepoRef, since: number, limit: number): Promise<RunFacts[]> {
    const t = await this.target(ref);
    const what = `list queued runs in ${ref.repo}`;
    const response = await this.read(t, what, () =>
      t.octokit.rest.actions.listWorkflowRunsForRepo({
        ...own(),
        owner: t.owner,
        repo: t.repo,
        status: 'queued',
        created: `>=${new Date(since).toISOString()}`,
        per_page: Math.max(1, Math.min(PER_PAGE, limit)),
      }),
    );
    if (!response) return [];
    return parseBody(runsPageSchema, response.data, what).workflow_runs.map(toRunFacts);
  }

  async runnerVersionDeprecation(
    version: string,
    owner: RunnerOwner,
    installationId: number | null,
  ): Promise<RunnerVersionDeprecation | null> {
    const t = await this.scope(owner, installationId);
    const bare = /^v?(\d+\.\d+\.\d+)$/.exec(version)?.[1];
    if (!bare) throw new RangeError(`not a runner version: ${version}`);
    const what = `read the deprecation of runner version ${bare}`;
    // Newer than octokit's typed routes: the plain request, with the same retry and auth.
    const response = await this.read(t, what, () =>
      t.octokit.request('GET /actions/runners/deprecations/{version}', {
        ...own(),
        version: bare,
      }),
    );
    if (!response) return null;
    const body = parseBody(deprecationSchema, response.data, what);
    return {
      version: bare,
      runtimeDeprecatesAt: timeOf(body.runtime_deprecates_at),
      registrationDeprecatesAt: timeOf(body.registration_deprecates_at),
    };
  }

  private async target(ref: RepoRef): Promise<Target> {
    const [owner, repo] = splitRepo(ref.repo);
    return { ...(await this.scope({ repo: ref.repo }, ref.installationId)), owner, repo };
  }

  private async scope(owner: RunnerOwner, given: number | null): Promise<Scope & { id: number }> {
    const id = await this.installationOf(owner, given);
    const key = accountKey(owner);
    const forget = () => {
      if (given === null) this.installationIds.delete(key);
    };
    return { id, octokit: this.octokits.forInstallation(id), forget };
  }

  private async mutate(
    scope: Scope,
    what: string,
    call: () => Promise<unknown>,
  ): Promise<GithubMutation> {
    try {
      await call();
      return { result: 'done' };
    } catch (error) {
      return this.refusal(scope, what, error);
    }
  }

  /**
   * A re-run or cancel guarded by the run's attempt: read the run, send the POST only while the
   * run is on the expected attempt (and in a status where the call means something), and settle
   * an ambiguous answer (timeout, 5xx) by reading the run again, never by sending it again.
   */
  private async mutateRun(
    target: Target,
    ref: RepoRef,
    expected: AttemptPrecondition,
    intent: 'rerun' | 'cancel',
    what: string,
    call: () => Promise<unknown>,
  ): Promise<GithubMutation> {
    const before = await this.getRun(ref, expected.runId);
    if (!before) return { result: 'not-found', message: `run ${expected.runId} not found` };
    const stale = precondition(before, expected, intent);
    if (stale) return stale;
    if (intent === 'cancel' && expected.jobs) {
      const busy = jobsPrecondition(await this.listJobs(ref, expected.runId), expected);
      if (busy) return busy;
    }
    if (intent === 'rerun' && expected.killedJobs) {
      const judged = expected.killedJobs;
      const other = (await this.listJobs(ref, expected.runId)).find(
        (j) => j.status === 'completed' && retriedAsFailed(j) && !judged.includes(j.jobId),
      );
      if (other)
        return {
          result: 'try-again',
          message: `job ${other.jobId} (${other.name}) of run ${expected.runId} ended ${other.conclusion ?? '?'} and was not found killed: ${what} would re-run it too`,
        };
    }
    try {
      await call();
      return { result: 'done' };
    } catch (error) {
      if (!isAmbiguous(error)) return cancelRefusal(intent, this.refusal(target, what, error));
      return this.settle(ref, expected, intent, what, error);
    }
  }

  /** After an ambiguous answer: did the call take effect? Only the run can say. */
  private async settle(
    ref: RepoRef,
    expected: AttemptPrecondition,
    intent: 'rerun' | 'cancel',
    what: string,
    error: unknown,
  ): Promise<GithubMutation> {
    const answer = describeFailure(error);
    let after: RunFacts | null;
    try {
      after = await this.getRun(ref, expected.runId);
    } catch (readError) {
      return {
        result: 'unknown',
        message: `${what}: ${answer}; the run could not be read (${describeFailure(readError)})`,
      };
    }
    if (after && after.runAttempt > expected.runAttempt) return { result: 'done' };
    if (intent === 'cancel' && after?.status === 'completed') return { result: 'done' };
    // A cancel GitHub failed (500 "Failed to cancel workflow run", actions/runner#3329) left the
    // run in progress: sending it again is safe, unlike a re-run.
    if (intent === 'cancel' && after?.runAttempt === expected.runAttempt)
      return {
        result: 'try-again',
        message: `${what}: ${answer}; the run is still ${after.status}`,
      };
    return {
      result: 'unknown',
      message: `${what}: ${answer}; the run is still on attempt ${after?.runAttempt ?? '?'} (${after?.status ?? 'not found'})`,
    };
  }

  private refusal(scope: Scope, what: string, error: unknown): GithubMutation {
    try {
      return refusalOutcome(error, what, this.clock.now());
    } catch (typed) {
      if (typed instanceof GithubRequestError) scope.forget();
      throw typed;
    }
  }

  /**
   * Every item of a list, page by page through the paginate plugin's iterator (which follows
   * GitHub's `Link: rel="next"`): a 404 for the target or an empty page ends it, and a list
   * longer than MAX_PAGES pages is refused rather than read without end.
   */
  private async listAll<T>(
    scope: Scope,
    what: string,
    pages: AsyncIterable<{ data: unknown; headers: { link?: string } }>,
    itemsOf: (data: unknown) => T[],
  ): Promise<T[]> {
    const all: T[] = [];
    const iterator = pages[Symbol.asyncIterator]();
    for (let page = 1; ; page++) {
      const next = await this.read(scope, what, () => iterator.next());
      if (!next || next.done) return all;
      const items = itemsOf(next.value.data);
      all.push(...items);
      if (items.length === 0) return all;
      if (page >= MAX_PAGES && hasNextPage(next.value.headers.link))
        throw new GithubResponseError(`${what}: more than ${MAX_PAGES} pages`);
    }
  }

  /** The response, or null when the target itself is not found (404). */
  private async read<T>(scope: Scope, what: string, call: () => Promise<T>): Promise<T | null> {
    try {
      return await call();
    } catch (error) {
      const failure = requestFailureOf(error);
      if (failure?.status === 404 && !isAuthPath(failure.path)) return null;
      const typed = unavailableOrRequestError(error, what, this.clock.now());
      // An App reinstalled under a new id: look the installation up again next time.
      if (typed instanceof GithubRequestError) scope.forget();
      throw typed;
    }
  }

  /** The given installation id, or the one GitHub names for the owner's account (cached). */
  private installationOf(owner: RunnerOwner, given: number | null): Promise<number> {
    if (given !== null) return Promise.resolve(checkedId(given));
    const key = accountKey(owner);
    let found = this.installationIds.get(key);
    if (!found) {
      found = this.lookUpInstallation(owner);
      this.installationIds.set(key, found);
      found.catch(() => this.installationIds.delete(key));
    }
    return found;
  }

  private async lookUpInstallation(owner: RunnerOwner): Promise<number> {
    const app = this.octokits.forApp();
    const what = `find the App installation for ${describe(owner)}`;
    let data: unknown;
    try {
      const response =
        'org' in owner
          ? await app.rest.apps.getOrgInstallation({ ...own(), org: owner.org })
          : await app.rest.apps.getRepoInstallation({
              ...own(),
              owner: splitRepo(owner.repo)[0],
              repo: splitRepo(owner.repo)[1],
            });
      data = response.data;
    } catch (error) {
      if (requestFailureOf(error)?.status === 404) {
        throw new GithubRequestError(`${what}: the App is not installed there`, 404, {
          cause: error,
        });
      }
      throw unavailableOrRequestError(error, what, this.clock.now());
    }
    return parseBody(installationSchema, data, what).id;
  }
}

function splitRepo(fullName: string): [string, string] {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(fullName);
  if (!match?.[1] || !match[2]) throw new RangeError(`not an owner/repo name: ${fullName}`);
  return [match[1], match[2]];
}

function accountKey(owner: RunnerOwner): string {
  return ('org' in owner ? owner.org : splitRepo(owner.repo)[0]).toLowerCase();
}

function checkedId(id: number): number {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`not a GitHub id: ${id}`);
  return id;
}

function describe(owner: RunnerOwner): string {
  return 'org' in owner ? `org ${owner.org}` : `repo ${owner.repo}`;
}

/**
 * Why the run no longer wants this call, or null when it does. A re-run needs the run completed
 * on the expected attempt; a cancel needs it on that attempt and not yet completed.
 */
function precondition(
  run: RunFacts,
  expected: AttemptPrecondition,
  intent: 'rerun' | 'cancel',
): GithubMutation | null {
  if (run.runAttempt !== expected.runAttempt) {
    return {
      result: 'moved-on',
      message: `run ${expected.runId} is on attempt ${run.runAttempt}, not ${expected.runAttempt}`,
    };
  }
  if (intent === 'rerun' && run.status !== 'completed') {
    return { result: 'already-running', message: `run ${expected.runId} is ${run.status}` };
  }
  if (intent === 'cancel' && run.status === 'completed') {
    return { result: 'conflict', message: `run ${expected.runId} has already completed` };
  }
  return null;
}

/**
 * A cancel is sent only while the jobs it is for are still in progress and, unless allowed, no
 * other job of the attempt is: cancelling a run cancels every job in it.
 */
function jobsPrecondition(
  jobs: readonly JobFacts[],
  expected: AttemptPrecondition,
): GithubMutation | null {
  const wanted = expected.jobs;
  if (!wanted) return null;
  const ofAttempt = jobs.filter((j) => j.runAttempt === expected.runAttempt);
  for (const id of wanted.inProgress) {
    const job = ofAttempt.find((j) => j.jobId === id);
    if (job?.status !== 'in_progress')
      return {
        result: 'moved-on',
        message: `job ${id} of run ${expected.runId} is ${job ? (job.conclusion ?? job.status) : 'not in its latest attempt'}`,
      };
  }
  if (wanted.allowLiveJobs) return null;
  const other = ofAttempt.find(
    (j) => j.status === 'in_progress' && !wanted.inProgress.includes(j.jobId),
  );
  return other
    ? {
        result: 'moved-on',
        message: `job ${other.jobId} (${other.name}) of run ${expected.runId} is still in progress: cancelling the run would cancel it`,
      }
    : null;
}

/** Conclusions `rerun-failed-jobs` leaves alone; it re-runs every other completed job. */
const NOT_RETRIED = new Set(['success', 'skipped', 'neutral']);
const retriedAsFailed = (j: JobFacts) => !NOT_RETRIED.has(j.conclusion ?? 'success');

/**
 * A 409 to a cancel is final only when it says the run already completed; "Cannot cancel a
 * workflow re-run that has not yet queued." (actions/runner#3872) clears within seconds.
 */
function cancelRefusal(intent: 'rerun' | 'cancel', refused: GithubMutation): GithubMutation {
  if (intent !== 'cancel' || refused.result !== 'conflict' || /complete/i.test(refused.message))
    return refused;
  return { result: 'try-again', message: refused.message };
}

function timeOf(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
}

/**
 * A failure after which GitHub may or may not have acted: no answer (octokit reports a network
 * error or a timeout as status 500) or a 5xx from the call itself. A failed token call or a rate
 * limit means the call was never served; an error that is no request error is a bug, not an answer.
 */
function isAmbiguous(error: unknown): boolean {
  const failure = requestFailureOf(error);
  if (!failure) return false;
  if (isAuthPath(failure.path) || isRateLimit(failure)) return false;
  return failure.status >= 500;
}

function describeFailure(error: unknown): string {
  const failure = requestFailureOf(error);
  if (failure) return `${failure.status} ${failure.message}`;
  return error instanceof Error ? error.message : String(error);
}
