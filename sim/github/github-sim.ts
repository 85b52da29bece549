import type { Clock, SimClock } from '../clock.js';
import { Rng } from '../rng.js';
import type { AppCredentials } from './auth/app-credentials.js';
import { createAppCredentials } from './auth/app-credentials.js';
import { TokenRegistry } from './auth/token-registry.js';
import type { Fault, FaultSpec } from './http/api-faults.js';
import { ApiFaults } from './http/api-faults.js';
import type { RequestRecord } from './http/github-http-server.js';
import { GitHubHttpServer } from './http/github-http-server.js';
import { RateLimiter } from './http/rate-limiter.js';
import { Router } from './http/route.js';
import type { GitHubEvent, GitHubEventListener } from './model/github-event.js';
import { EventHub } from './model/github-event.js';
import { GitHubStore } from './model/github-store.js';
import { IdSource } from './model/id-source.js';
import type { EngineTiming } from './model/job-engine.js';
import { DEFAULT_TIMING, JobEngine } from './model/job-engine.js';
import type {
  CancelFailure,
  Outcome,
  RunControlKnobs,
  TriggerOptions,
} from './model/run-control.js';
import { DEFAULT_RUN_CONTROL_KNOBS, RunControl } from './model/run-control.js';
import type { RunnerDeprecation } from './model/runner-versions.js';
import { SimActionsService } from './model/sim-actions-service.js';
import type { Actor, AuditEntry, Job, Run, Runner, WorkflowSpec } from './model/types.js';
import type { ApiUrls } from './payloads/api-urls.js';
import { GITHUB_URLS } from './payloads/api-urls.js';
import { webhookPayload } from './payloads/webhook-payload.js';
import { appRoutes } from './rest/app-routes.js';
import { jobRoutes } from './rest/job-routes.js';
import { rateLimitRoute } from './rest/rate-limit-route.js';
import { runRoutes } from './rest/run-routes.js';
import { runnerRoutes } from './rest/runner-routes.js';
import type { DeliveryRecord, WebhookTarget } from './webhooks/webhook-dispatcher.js';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher.js';
import type { WebhookKnobs } from './webhooks/webhook-knobs.js';

export interface GitHubSimOptions {
  clock: SimClock;
  /** Seed for ids, GUIDs, tokens and every fault draw. @default 1 */
  seed?: number | string;
  /** GitHub App id. @default 1337 */
  appId?: number;
  /** Reuse an App private key (PKCS#1 PEM) instead of generating one. */
  privateKey?: string;
  webhook?: WebhookTarget;
  knobs?: Partial<WebhookKnobs>;
  timing?: Partial<EngineTiming>;
  /** Refusals beyond the plain rules: `403 already running` persistence, cancel failures. */
  behaviour?: Partial<RunControlKnobs>;
  /** Runner version enforcement: runners below a version get no jobs and exit 0. */
  runnerDeprecation?: RunnerDeprecation;
  /** Primary rate limit per token owner per (simulated) hour. @default 5000 */
  rateLimit?: number;
  /** Hosts written into payloads and bodies. @default api.github.com / github.com */
  urls?: ApiUrls;
  /**
   * The clock App JWTs are checked against. @octokit/auth-app signs with the wall clock and corrects
   * skew only for App-level calls, not when it creates installation tokens; so by default the wall
   * clock (the only real-time read in the simulator). Pass the SimClock to check them in sim time.
   */
  jwtClock?: Clock;
}

const wallClock: Clock = { now: () => Date.now() };

export interface TriggeredRun {
  runId: number;
  /** Ids of the jobs queued at once (jobs that `need` others are created later). */
  jobIds: number[];
}

/** A loopback twin of GitHub Actions: model, REST API, App auth and webhook deliveries on one SimClock. */
export class GitHubSim {
  readonly clock: SimClock;
  readonly app: AppCredentials;
  /** The port the cluster twin (ARC's listener and runners) uses. */
  readonly actions: SimActionsService;
  readonly faults: ApiFaults;
  private readonly store: GitHubStore;
  private readonly engine: JobEngine;
  private readonly control: RunControl;
  private readonly events = new EventHub();
  private readonly webhooks: WebhookDispatcher;
  private readonly tokens: TokenRegistry;
  private readonly limiter: RateLimiter;
  private readonly server: GitHubHttpServer;
  private readonly urls: ApiUrls;
  private readonly hookId: number;

  constructor(options: GitHubSimOptions) {
    const rng = new Rng(options.seed ?? 1);
    this.clock = options.clock;
    this.urls = options.urls ?? GITHUB_URLS;
    const ids = new IdSource(rng.fork('model'));
    this.store = new GitHubStore(this.clock, ids);
    this.engine = new JobEngine(this.store, this.clock, this.events, {
      ...DEFAULT_TIMING,
      ...options.timing,
    });
    this.control = new RunControl(this.store, this.engine, this.clock, {
      ...DEFAULT_RUN_CONTROL_KNOBS,
      ...options.behaviour,
      cancelFailures: [...(options.behaviour?.cancelFailures ?? [])],
    });
    this.store.runnerDeprecation = options.runnerDeprecation;
    this.actions = new SimActionsService(this.store, this.engine, this.clock);
    this.app = createAppCredentials(options.appId ?? 1337, options.privateKey);
    this.hookId = ids.next('hook');
    this.webhooks = new WebhookDispatcher(
      this.clock,
      rng.fork('webhooks'),
      new IdSource(rng.fork('guids')),
      {
        hookId: this.hookId,
        appId: this.app.appId,
      },
    );
    this.webhooks.knobs = { ...this.webhooks.knobs, ...options.knobs };
    this.webhooks.setTarget(options.webhook);
    this.events.on((event) => this.deliver(event));
    this.tokens = new TokenRegistry(new IdSource(rng.fork('tokens')));
    const rateLimit = options.rateLimit ?? 5000;
    this.limiter = new RateLimiter(rateLimit);
    this.faults = new ApiFaults(rng.fork('faults'));
    const router = new Router();
    const deps = { store: this.store, engine: this.engine, control: this.control, urls: this.urls };
    router.add(...runRoutes(deps), ...jobRoutes(deps), ...runnerRoutes(deps));
    router.add(rateLimitRoute(this.limiter, rateLimit, () => this.clock.now()));
    router.add(
      ...appRoutes({
        ...deps,
        credentials: this.app,
        tokens: this.tokens,
        webhooks: this.webhooks,
      }),
    );
    this.server = new GitHubHttpServer({
      clock: this.clock,
      router,
      tokens: this.tokens,
      credentials: this.app,
      faults: this.faults,
      limiter: this.limiter,
      ids: new IdSource(rng.fork('http')),
      jwtClock: options.jwtClock ?? wallClock,
    });
  }

  /** Starts the REST API on 127.0.0.1 (random port); returns its base URL (octokit's `baseUrl`). */
  start(): Promise<string> {
    return this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  get baseUrl(): string {
    return this.server.baseUrl;
  }

  // --- world building -------------------------------------------------------------------------

  createOrg(login: string): { id: number; login: string } {
    const account = this.store.account(login, 'Organization');
    return { id: account.id, login: account.login };
  }

  createRepo(fullName: string): { id: number; fullName: string } {
    const repo = this.store.createRepo(fullName);
    return { id: repo.id, fullName: repo.fullName };
  }

  /** Installs the App on an organisation (all repositories); returns the installation id. */
  createInstallation(accountLogin: string): number {
    return this.store.createInstallation(accountLogin).id;
  }

  defineWorkflow(repoFullName: string, spec: WorkflowSpec): number {
    return this.store.defineWorkflow(repoFullName, spec).id;
  }

  triggerRun(repoFullName: string, workflowName: string, options?: TriggerOptions): TriggeredRun {
    const run = this.control.trigger(
      this.store.requireWorkflow(repoFullName, workflowName),
      options,
    );
    return { runId: run.id, jobIds: run.jobs.map((job) => job.id) };
  }

  // --- acting as a person ---------------------------------------------------------------------

  rerunJob(jobId: number, by: Actor = 'user', login?: string): Outcome {
    return this.control.rerunJob(jobId, by, login);
  }

  rerunFailedJobs(runId: number, by: Actor = 'user', login?: string): Outcome {
    return this.control.rerunFailedJobs(runId, by, login);
  }

  rerunRun(runId: number, by: Actor = 'user', login?: string): Outcome {
    return this.control.rerunRun(runId, by, login);
  }

  cancelRun(runId: number, options: { force?: boolean; by?: Actor } = {}): Outcome {
    return this.control.cancel(runId, options.by ?? 'user', options.force ?? false);
  }

  /** Makes `cancel` or `force-cancel` fail as real GitHub sometimes does (see CancelFailure). */
  addCancelFailure(failure: CancelFailure): void {
    this.control.knobs.cancelFailures.push(failure);
  }

  /** `403 This workflow is already running` keeps answering re-runs this long after completion. */
  setAlreadyRunningAfterCompletion(ms: number): void {
    this.control.knobs.alreadyRunningAfterCompletionMs = ms;
  }

  /** Runner version enforcement from now on (undefined: none). */
  setRunnerDeprecation(deprecation: RunnerDeprecation | undefined): void {
    this.store.runnerDeprecation = deprecation;
  }

  /** The engine's timings in force (lock TTL, graceful-stop and force-cancel delays, …). */
  get timing(): Readonly<EngineTiming> {
    return this.engine.timing;
  }

  // --- credentials and API faults ----------------------------------------------------------------

  /** An installation token, as `POST /app/installations/{id}/access_tokens` would issue it. */
  issueInstallationToken(installationId: number): string {
    const installation = this.store.installations.get(installationId);
    if (!installation) throw new Error(`unknown installation ${installationId}`);
    return this.tokens.issueInstallationToken(installation, this.clock.now()).token;
  }

  /** A personal token; mutating calls made with it are audited as `by: 'user'`. */
  issueUserToken(login = 'octocat'): string {
    this.store.account(login, 'User');
    return this.tokens.issueUserToken(login);
  }

  addFault(spec: FaultSpec): Fault {
    return this.faults.add(spec);
  }

  /** Spends an installation's primary rate limit for the current hour. */
  /** The account suspends the App's installation: its tokens are refused from now on. */
  suspendInstallation(installationId: number): void {
    const installation = this.store.installations.get(installationId);
    if (!installation) throw new Error(`no installation ${installationId}`);
    installation.suspendedAt = this.clock.now();
  }

  exhaustRateLimit(installationId: number): void {
    this.limiter.exhaust(`installation ${installationId}`, this.clock.now());
  }

  /** Requests currently held by simulated latency; they answer once the clock passes them. */
  heldRequests(): number {
    return this.server.heldRequests();
  }

  whenRequestsHeld(count = 1): Promise<void> {
    return this.server.whenHeld(count);
  }

  // --- webhooks -------------------------------------------------------------------------------

  setWebhookTarget(target: WebhookTarget | undefined): void {
    this.webhooks.setTarget(target);
  }

  setWebhookKnobs(knobs: Partial<WebhookKnobs>): void {
    this.webhooks.knobs = { ...this.webhooks.knobs, ...knobs };
  }

  /** Re-sends a delivery with the same `X-GitHub-Delivery`, `delayMs` from now. */
  redeliver(guid: string, delayMs = 0): DeliveryRecord {
    return this.webhooks.redeliver(guid, delayMs);
  }

  deliveries(): readonly DeliveryRecord[] {
    return this.webhooks.deliveries();
  }

  get webhookHookId(): number {
    return this.hookId;
  }

  // --- inspection -----------------------------------------------------------------------------

  /** Every change as it happens (a copy: safe to keep). Returns an unsubscribe function. */
  on(listener: GitHubEventListener): () => void {
    return this.events.on((event) => listener(structuredClone(event)));
  }

  /** Called whenever a job becomes queued, so idle runners of its scale set can ask for it again. */
  onJobQueued(listener: (job: Job) => void): () => void {
    const wrapped = (job: Job) => listener(structuredClone(job));
    this.engine.jobQueued.add(wrapped);
    return () => this.engine.jobQueued.delete(wrapped);
  }

  run(runId: number): Run | undefined {
    const run = this.store.runs.get(runId);
    return run && structuredClone(run);
  }

  runs(): Run[] {
    return [...this.store.runs.values()].map((run) => structuredClone(run));
  }

  job(jobId: number): Job | undefined {
    const job = this.store.jobs.get(jobId);
    return job && structuredClone(job);
  }

  /** A run's jobs: the latest execution of each, or every execution of every attempt. */
  jobs(runId: number, filter: 'latest' | 'all' = 'latest'): Job[] {
    const run = this.store.runs.get(runId);
    if (!run) return [];
    return (filter === 'all' ? run.jobs : this.store.latestJobs(run)).map((job) =>
      structuredClone(job),
    );
  }

  /** The jobs each attempt of a run executed, attempt 1 first. */
  attempts(runId: number): { attempt: number; jobs: Job[] }[] {
    const run = this.store.runs.get(runId);
    if (!run) return [];
    return Array.from({ length: run.attempt }, (_unused, i) => ({
      attempt: i + 1,
      jobs: run.jobs.filter((job) => job.runAttempt === i + 1).map((job) => structuredClone(job)),
    }));
  }

  /** Every job execution of every run, in creation order. */
  allJobs(): Job[] {
    return [...this.store.jobs.values()].map((job) => structuredClone(job));
  }

  runners(): Runner[] {
    return [...this.store.runners.values()].map((runner) => structuredClone(runner));
  }

  /** Every mutating call and model-internal change, in order. */
  audit(): readonly AuditEntry[] {
    return this.store.audit;
  }

  requests(): readonly RequestRecord[] {
    return this.server.requests;
  }

  private deliver(event: GitHubEvent): void {
    const installation = this.store.installationFor(event.run.repo.owner.login);
    this.webhooks.enqueue(
      event,
      webhookPayload(event, installation, this.urls),
      installation?.id ?? null,
    );
  }
}
