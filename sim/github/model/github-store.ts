import type { Clock } from '../../clock.js';
import type { IdSource } from './id-source.js';
import type { RunnerDeprecation } from './runner-versions.js';
import { nodeId } from './id-source.js';
import { validateWorkflow } from './job-names.js';
import type {
  Account,
  AuditEntry,
  Installation,
  Job,
  Repo,
  Run,
  Runner,
  ScaleSet,
  Workflow,
  WorkflowSpec,
} from './types.js';

/** Everything the GitHub twin knows, indexed; no behaviour beyond lookups and creation. */
export class GitHubStore {
  readonly accounts = new Map<string, Account>();
  readonly repos = new Map<string, Repo>();
  readonly installations = new Map<number, Installation>();
  readonly workflows = new Map<string, Workflow>();
  readonly runs = new Map<number, Run>();
  readonly jobs = new Map<number, Job>();
  readonly scaleSets = new Map<number, ScaleSet>();
  readonly runners = new Map<number, Runner>();
  readonly audit: AuditEntry[] = [];
  /** Runner version enforcement (runner-versions.ts); none by default. */
  runnerDeprecation: RunnerDeprecation | undefined;
  private readonly runNumbers = new Map<number, number>();

  constructor(
    readonly clock: Clock,
    readonly ids: IdSource,
  ) {}

  account(login: string, type: Account['type'] = 'Organization'): Account {
    const existing = this.accounts.get(login);
    if (existing) return existing;
    const id = this.ids.next('account');
    const account: Account = { login, id, nodeId: nodeId(type === 'User' ? 'U' : 'O', id), type };
    this.accounts.set(login, account);
    return account;
  }

  createRepo(fullName: string): Repo {
    const existing = this.repos.get(fullName);
    if (existing) return existing;
    const [ownerLogin, name] = splitFullName(fullName);
    const id = this.ids.next('repo');
    const repo: Repo = {
      id,
      nodeId: nodeId('R', id),
      owner: this.account(ownerLogin),
      name,
      fullName,
      createdAt: this.clock.now() - 400 * DAY_MS,
      defaultBranch: 'main',
    };
    this.repos.set(fullName, repo);
    return repo;
  }

  createInstallation(accountLogin: string): Installation {
    for (const existing of this.installations.values())
      if (existing.account.login === accountLogin) return existing;
    const installation: Installation = {
      id: this.ids.next('installation'),
      account: this.account(accountLogin),
    };
    this.installations.set(installation.id, installation);
    return installation;
  }

  installationFor(ownerLogin: string): Installation | undefined {
    for (const installation of this.installations.values())
      if (installation.account.login === ownerLogin) return installation;
    return undefined;
  }

  defineWorkflow(repoFullName: string, spec: WorkflowSpec): Workflow {
    const repo = this.requireRepo(repoFullName);
    validateWorkflow(spec);
    const key = `${repoFullName}:${spec.name}`;
    const id = this.workflows.get(key)?.id ?? this.ids.next('workflow');
    const path =
      spec.path ?? `.github/workflows/${spec.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.yml`;
    const workflow: Workflow = {
      id,
      nodeId: nodeId('W', id),
      repo,
      spec,
      path,
      createdAt: repo.createdAt,
    };
    this.workflows.set(key, workflow);
    return workflow;
  }

  requireRepo(fullName: string): Repo {
    const repo = this.repos.get(fullName);
    if (!repo) throw new Error(`unknown repository ${fullName}; create it first`);
    return repo;
  }

  requireWorkflow(repoFullName: string, name: string): Workflow {
    const workflow = this.workflows.get(`${repoFullName}:${name}`);
    if (!workflow)
      throw new Error(`unknown workflow "${name}" in ${repoFullName}; define it first`);
    return workflow;
  }

  nextRunNumber(workflow: Workflow): number {
    const next = (this.runNumbers.get(workflow.id) ?? 0) + 1;
    this.runNumbers.set(workflow.id, next);
    return next;
  }

  /** The most recent registration under each name (a scan was most of a 10,000-runner world). */
  private readonly latestRunnerByName = new Map<string, Runner>();

  /** Registers a runner; it is the one its name finds from now on. */
  addRunner(runner: Runner): void {
    this.runners.set(runner.id, runner);
    this.latestRunnerByName.set(runner.name, runner);
  }

  /** The most recent registration under this name. */
  runnerByName(name: string): Runner | undefined {
    return this.latestRunnerByName.get(name);
  }

  /** The latest execution of every job name in the run, in name order of first appearance. */
  latestJobs(run: Run): Job[] {
    const latest = new Map<string, Job>();
    for (const job of run.jobs) latest.set(job.name, job);
    return [...latest.values()];
  }

  latestJob(run: Run, name: string): Job | undefined {
    for (let i = run.jobs.length - 1; i >= 0; i--) {
      const job = run.jobs[i];
      if (job?.name === name) return job;
    }
    return undefined;
  }
}

export const DAY_MS = 24 * 60 * 60 * 1000;

function splitFullName(fullName: string): [string, string] {
  const [owner, name, extra] = fullName.split('/');
  if (!owner || !name || extra !== undefined)
    throw new Error(`expected owner/name, got "${fullName}"`);
  return [owner, name];
}
