/**
 * `runner-medic rescue <job URL | run URL | cluster/namespace/runner>`: one subject decided now,
 * by the engine's own rules, policy and guardrails. Without `--yes` it only says what it would
 * do and why; with `--yes` the engine decides and acts for that subject (through a timer due
 * now, the engine's own way to be told "decide again for these subjects").
 */
import { MUTATING_KINDS, type ActionKind, type Decision } from '../domain/model/action.js';
import { decide } from '../domain/decide/decide.js';
import type { Facts, JobRecord } from '../domain/model/facts.js';
import type { Policy } from '../domain/policy/policy.js';
import { gatherSlice, readRunnersOfRun } from '../engine/gather-slice.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import { runEngine, type ActionReport } from '../engine/run-engine.js';
import { subjectKey, type Subject } from '../engine/subjects.js';
import { RunnerMedicError } from '../ports/errors.js';

export type RescueTarget =
  | { kind: 'job'; repo: string; runId: number; jobId: number }
  | { kind: 'run'; repo: string; runId: number }
  | { kind: 'runner'; cluster: string; namespace: string; name: string };

const JOB_URL = /^https?:\/\/[^/]+\/([\w.-]+)\/([\w.-]+)\/actions\/runs\/(\d+)\/job\/(\d+)\/?$/;
const RUN_URL =
  /^https?:\/\/[^/]+\/([\w.-]+)\/([\w.-]+)\/actions\/runs\/(\d+)(?:\/attempts\/\d+)?\/?$/;
const RUNNER = /^([\w.-]+)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/;

/** The subject a command line names; a string says why it names none. */
export function parseRescueTarget(text: string): RescueTarget | string {
  const job = JOB_URL.exec(text);
  if (job) {
    const [, owner, name, runId, jobId] = job;
    return { kind: 'job', repo: `${owner}/${name}`, runId: Number(runId), jobId: Number(jobId) };
  }
  const run = RUN_URL.exec(text);
  if (run) {
    const [, owner, name, runId] = run;
    return { kind: 'run', repo: `${owner}/${name}`, runId: Number(runId) };
  }
  const runner = RUNNER.exec(text);
  if (runner) {
    const [, cluster = '', namespace = '', , name = ''] = runner;
    return { kind: 'runner', cluster, namespace, name };
  }
  return `not a job URL (…/actions/runs/<run>/job/<job>), a run URL (…/actions/runs/<run>) or cluster/namespace/runner: ${text}`;
}

interface PlannedAction {
  key: string;
  kind: ActionKind;
  rule: string;
  reason: string;
  dryRun: boolean;
}

interface HeldBack {
  kind: ActionKind;
  rule: string;
  why: string;
}

export interface RescueOutcome {
  subjects: string[];
  /** What the engine would do now, and why. */
  would: PlannedAction[];
  /** What a guardrail holds back, and which guardrail. */
  held: HeldBack[];
  /** With `--yes`: what the engine did (null without). */
  did: ActionReport[] | null;
  /** Why nothing is done: a guardrail, dry run, or nothing to do. Null when it acts (or would). */
  refused: string | null;
}

/** Reads the subject's current state, decides, and with `yes` acts through the engine. */
export async function rescue(
  target: RescueTarget,
  options: { yes: boolean },
  deps: EngineDeps,
): Promise<RescueOutcome> {
  const now = deps.clock.now();
  const policy = await deps.policy();
  const subjects = await observe(target, deps, now);
  const decision = await preview(subjects, policy, now, deps);
  const would = decision.actions.map((a) => ({
    key: a.key,
    kind: a.target.kind,
    rule: a.rule,
    reason: a.reason,
    dryRun: a.dryRun,
  }));
  const held = decision.held.map((h) => ({ kind: h.kind, rule: h.rule, why: h.why }));
  const acting = would.filter((a) => !a.dryRun);
  const refused =
    acting.length > 0
      ? null
      : would.some((a) => a.dryRun && MUTATING_KINDS.has(a.kind))
        ? 'the policy is in dry run for this subject: nothing would be done (set dryRun: false)'
        : held.length > 0
          ? `held by a guardrail: ${[...new Set(held.map((h) => h.why))].join('; ')}`
          : 'nothing to do: no rule finds this subject lost or stuck';
  if (!options.yes || refused !== null)
    return { subjects: subjects.map(subjectKey), would, held, did: null, refused };

  await deps.store.scheduleWake(now, now, subjects.map(subjectKey));
  const report = await runEngine({ kind: 'wake' }, deps);
  const planned = new Set(would.map((a) => a.key));
  return {
    subjects: subjects.map(subjectKey),
    would,
    // What the engine held when it acted (it decided again, so this replaces the preview's).
    held: report.held.map((h) => ({ kind: h.kind, rule: h.rule, why: h.why })),
    did: report.actions.filter((a) => planned.has(a.key)),
    refused: null,
  };
}

/**
 * The subject's current state from GitHub, recorded in the store as an observation would be
 * (live state outranks what the store remembers), and the engine's subjects for it.
 */
async function observe(target: RescueTarget, deps: EngineDeps, now: number): Promise<Subject[]> {
  if (target.kind === 'runner') {
    const known = deps.clusters.clusters();
    if (!known.includes(target.cluster))
      throw new RescueError(
        `cluster ${target.cluster} is not configured (CLUSTERS has: ${known.join(', ') || 'none'})`,
      );
    return [
      { kind: 'runner', cluster: target.cluster, namespace: target.namespace, name: target.name },
    ];
  }
  const ref = { repo: target.repo, installationId: null };
  const stored = (await deps.store.readRun(target.repo, target.runId, now)).facts;
  const repository = stored.jobs[0]?.repository ??
    stored.runs[0]?.repository ?? {
      // The repository's numeric id is not in a job or run read; runner-medic never joins on it.
      id: 0,
      fullName: target.repo,
      owner: target.repo.split('/')[0] ?? target.repo,
      name: target.repo.split('/')[1] ?? target.repo,
    };
  const installationId = stored.jobs[0]?.installationId ?? stored.runs[0]?.installationId ?? null;
  const run = await deps.github.getRun(ref, target.runId);
  if (!run) throw new RescueError(`run ${target.runId} of ${target.repo}: not found on GitHub`);
  await deps.store.recordRun({ repository, installationId, run }, now);
  const jobs =
    target.kind === 'job'
      ? [await deps.github.getJob(ref, target.jobId)]
      : await deps.github.listJobs(ref, target.runId);
  const subjects: Subject[] = [{ kind: 'run', repo: target.repo, runId: target.runId }];
  for (const job of jobs) {
    if (!job) throw new RescueError(`job of ${target.repo}: not found on GitHub`);
    const record: JobRecord = { repository, installationId, job, annotations: null };
    await deps.store.recordJob(record, now);
    subjects.push({ kind: 'job', repo: target.repo, jobId: job.jobId });
    if (job.runnerName) subjects.push({ kind: 'runner-name', name: job.runnerName });
    else if (job.status === 'queued') subjects.push(...(await runnersOfScaleSets(job, deps, now)));
  }
  return subjects;
}

/**
 * A queued job waits for a runner of its scale set: the runners of that scale set (where the
 * sweep last saw it) are the subjects that can hold it up, e.g. a poisoned slot.
 */
async function runnersOfScaleSets(
  job: JobRecord['job'],
  deps: EngineDeps,
  now: number,
): Promise<Subject[]> {
  const { sets } = await deps.store.readScaleSets(now);
  const out: Subject[] = [];
  for (const label of job.labels) {
    const places = sets[label.toLowerCase()] ?? (await findScaleSet(label, deps));
    for (const place of places) {
      const [cluster, namespace] = place.split('/');
      if (!cluster || !namespace || !deps.clusters.clusters().includes(cluster)) continue;
      const gateway = await deps.clusters.forCluster(cluster);
      const listing = await gateway.listRunners(namespace);
      for (const er of listing.ephemeralRunners)
        if (er.metadata.labels?.['actions.github.com/scale-set-name'] === label)
          out.push({ kind: 'runner', cluster, namespace, name: er.metadata.name });
    }
  }
  return out;
}

/** Where a scale set lives when no sweep has noted it yet: one labelled runner per cluster. */
async function findScaleSet(label: string, deps: EngineDeps): Promise<string[]> {
  const places: string[] = [];
  for (const cluster of deps.clusters.clusters()) {
    const gateway = await deps.clusters.forCluster(cluster);
    const er = await gateway.findRunnerOfScaleSet(
      label,
      deps.clusters.namespaces(cluster) ?? undefined,
    );
    if (er?.metadata.namespace) places.push(`${cluster}/${er.metadata.namespace}`);
  }
  return places;
}

/**
 * The decision the engine would take now, without claiming or doing anything: the slice, then
 * the facts the rules ask for (annotations, the run, an EphemeralRunner), read but not stored.
 */
async function preview(
  subjects: Subject[],
  policy: Policy,
  now: number,
  deps: EngineDeps,
): Promise<Decision> {
  const { facts, unavailable } = await gatherSlice(subjects, deps, now);
  if (unavailable.length > 0)
    throw new RescueUnreachable(
      unavailable.map((u) => `cluster ${u.cluster}: ${u.error.message}`).join('; '),
    );
  let decision = decide(facts, policy, now);
  for (let round = 0; round < 3 && decision.needs.length > 0; round++) {
    for (const need of decision.needs) await learn(need, facts, deps, now);
    decision = decide(facts, policy, now);
  }
  return decision;
}

async function learn(
  need: Decision['needs'][number],
  facts: Facts,
  deps: EngineDeps,
  now: number,
): Promise<void> {
  if (need.kind === 'annotations') {
    const annotations = await deps.github.listAnnotations(need, need.jobId);
    facts.jobs = facts.jobs.map((j) =>
      j.repository.fullName === need.repo && j.job.jobId === need.jobId ? { ...j, annotations } : j,
    );
  } else if (need.kind === 'run') {
    const run = await deps.github.getRun(need, need.runId);
    const job = facts.jobs.find((j) => j.repository.fullName === need.repo);
    if (run && job)
      facts.runs = [
        ...facts.runs.filter((r) => r.run.runId !== run.runId),
        { repository: job.repository, installationId: need.installationId, run },
      ];
  } else if (need.kind === 'runners-of-run') {
    await readRunnersOfRun(need, facts, deps, now);
  } else {
    const gateway = await deps.clusters.forCluster(need.cluster);
    const er = await gateway.getEphemeralRunner(need.namespace, need.name);
    if (er) facts.ephemeralRunners = [...facts.ephemeralRunners, er];
    else
      facts.listings = [
        ...facts.listings,
        { cluster: need.cluster, namespace: need.namespace, at: now },
      ];
  }
}

/** The subject cannot be rescued as named (not found, not configured). */
export class RescueError extends RunnerMedicError {
  constructor(message: string) {
    super('refused', message);
  }
}

/** A cluster the subject lives in could not be read. */
export class RescueUnreachable extends RunnerMedicError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** The outcome as lines for a person. */
export function formatRescue(target: string, outcome: RescueOutcome, yes: boolean): string {
  const lines = [`rescue ${target}`, `  decided for: ${outcome.subjects.join(', ')}`];
  for (const a of outcome.would)
    lines.push(`  ${a.dryRun ? 'would (dry run)' : 'would'}: ${a.kind} [${a.rule}] ${a.reason}`);
  for (const h of outcome.held) lines.push(`  held: ${h.kind} [${h.rule}] ${h.why}`);
  if (outcome.did)
    for (const d of outcome.did) lines.push(`  did: ${d.kind}: ${d.outcome} (${d.detail})`);
  if (outcome.refused) lines.push(`refused: ${outcome.refused}`);
  else if (!yes) lines.push('Nothing was done. Run again with --yes to do it.');
  return `${lines.join('\n')}\n`;
}
