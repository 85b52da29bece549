import { MUTATING_KINDS } from '../domain/action.js';
import type { Action, ActionOutcome, Decision, HeldAction } from '../domain/action.js';
import { decide } from '../domain/decide.js';
import type { Facts, RunnerRegistration } from '../domain/facts.js';
import type { Policy } from '../domain/policy.js';
import type { Clock } from '../ports/clock.js';
import type { DeliveryLedger } from '../ports/delivery-ledger.js';
import type { ClusterGateways } from '../ports/cluster-gateway.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { FactsStore, StoredFacts } from '../ports/facts-store.js';
import type { GithubGateway } from '../ports/github-gateway.js';
import { carryOut } from './carry-out.js';
import { gatherFacts } from './gather-facts.js';
import { recordTrigger } from './record-trigger.js';
import { recoverStaleClaims } from './recover-stale-claims.js';
import { redeliverMissedWebhooks } from './redeliver-missed-webhooks.js';
import { remediationEvent } from './remediation-event.js';
import type { Trigger } from './trigger.js';

export interface EngineLog {
  info(message: string, fields?: object): void;
  warn(message: string, fields?: object): void;
}

export interface EngineMetrics {
  count(name: string, dimensions: Record<string, string>): void;
  milliseconds(name: string, dimensions: Record<string, string>, value: number): void;
}

/** Wakes the engine at a time (EventBridge Scheduler in AWS, the simulated clock in scenarios). */
export interface WakeScheduler {
  wakeAt(at: number): Promise<void>;
}

export interface EngineDeps {
  store: FactsStore;
  clusters: ClusterGateways;
  github: GithubGateway;
  bus: EventPublisher;
  policy: () => Promise<Policy>;
  clock: Clock;
  log: EngineLog;
  metrics: EngineMetrics;
  wake?: WakeScheduler;
  /** A claim left without result this long is taken to be a crash and re-checked. @default 120 s */
  staleClaimMs?: number;
  /** The webhook ledger: when given, the sweep redelivers webhooks that never reached us. */
  deliveries?: DeliveryLedger;
}

export interface ActionReport {
  key: string;
  kind: string;
  rule: string;
  outcome: ActionOutcome | 'skipped';
  dryRun: boolean;
  detail: string;
}

export interface EngineReport {
  recorded: number;
  ignored: string[];
  actions: ActionReport[];
  held: HeldAction[];
  wakeAt: number | null;
}

const MAX_NEED_ROUNDS = 3;
const STALE_CLAIM_MS = 120_000;

/**
 * observe → correlate → decide → act, for any trigger. Safe under duplicate and concurrent
 * invocations: every action is claimed in the store before it runs.
 */
export async function runEngine(trigger: Trigger, deps: EngineDeps): Promise<EngineReport> {
  const now = deps.clock.now();
  const { recorded, ignored } = await recordTrigger(trigger, deps.store, now);
  for (const reason of ignored) deps.log.info('input not acted on', { reason });
  if (ignored.length > 0) deps.metrics.count('InputIgnored', { trigger: trigger.kind });

  const policy = await deps.policy();
  let stored = await deps.store.load(now);
  if (trigger.kind === 'sweep') {
    for (const r of await recoverStaleClaims(deps, now, deps.staleClaimMs ?? STALE_CLAIM_MS)) {
      deps.log.warn('claim without result re-checked', { ...r });
    }
    if (deps.deliveries) {
      const redelivered = await redeliverMissedWebhooks(deps.github, deps.deliveries, now);
      if (redelivered.length > 0)
        deps.log.warn('asked GitHub to redeliver missed webhooks', { redelivered });
    }
    await refreshRegistrations(stored, deps, now);
    stored = await deps.store.load(now);
  }
  const facts = await gatherFacts(stored, deps.store, deps.clusters, now);
  const decision = await decideWithNeeds(facts, policy, now, deps);

  const reports: ActionReport[] = [];
  let unavailable: Error | undefined;
  for (const action of decision.actions) {
    const report = await act(action, facts, now, deps);
    reports.push(report.report);
    unavailable ??= report.error;
  }
  for (const held of decision.held) deps.log.info('action held by a guardrail', { ...held });

  const wakeAt = earliest(
    decision.wakeAt,
    stored.wakeAt && stored.wakeAt > now ? stored.wakeAt : null,
  );
  // One wake-up per moment: a wake already due no later than this one will decide again anyway.
  const due = stored.wakeAt !== null && stored.wakeAt > now ? stored.wakeAt : null;
  if (decision.wakeAt !== null && (due === null || decision.wakeAt < due)) {
    await deps.store.scheduleWake(decision.wakeAt, now);
    await deps.wake?.wakeAt(decision.wakeAt);
  }
  if (unavailable) throw unavailable;
  return { recorded, ignored, actions: reports, held: decision.held, wakeAt };
}

async function decideWithNeeds(
  facts: Facts,
  policy: Policy,
  now: number,
  deps: EngineDeps,
): Promise<Decision> {
  let decision = decide(facts, policy, now);
  for (let round = 0; round < MAX_NEED_ROUNDS && decision.needs.length > 0; round++) {
    deps.log.info('reading more facts', { needs: decision.needs });
    for (const need of decision.needs) {
      const ref = 'repo' in need ? { repo: need.repo, installationId: need.installationId } : null;
      if (need.kind === 'annotations' && ref) {
        const annotations = await deps.github.listAnnotations(ref, need.jobId);
        await deps.store.setJobAnnotations(need.repo, need.jobId, annotations, now);
        facts.jobs = facts.jobs.map((j) =>
          j.repository.fullName === need.repo && j.job.jobId === need.jobId
            ? { ...j, annotations }
            : j,
        );
      } else if (need.kind === 'run' && ref) {
        const run = await deps.github.getRun(ref, need.runId);
        const job = facts.jobs.find((j) => j.repository.fullName === need.repo);
        if (run && job) {
          const record = { repository: job.repository, installationId: need.installationId, run };
          await deps.store.recordRun(record, now);
          facts.runs = [...facts.runs.filter((r) => r.run.runId !== run.runId), record];
        }
      } else if (need.kind === 'ephemeral-runner') {
        const gateway = await deps.clusters.forCluster(need.cluster);
        const er = await gateway.getEphemeralRunner(need.namespace, need.name);
        if (er && !facts.ephemeralRunners.some((e) => e.metadata.uid === er.metadata.uid)) {
          facts.ephemeralRunners = [...facts.ephemeralRunners, er];
        }
      }
    }
    decision = decide(facts, policy, now);
  }
  return decision;
}

async function act(
  action: Action,
  facts: Facts,
  now: number,
  deps: EngineDeps,
): Promise<{ report: ActionReport; error?: Error }> {
  const base = {
    key: action.key,
    kind: action.target.kind,
    rule: action.rule,
    dryRun: action.dryRun,
  };
  const claim = await deps.store.claimAction(action, now, deps.staleClaimMs ?? STALE_CLAIM_MS);
  if (!claim.claimed) {
    return { report: { ...base, outcome: 'skipped', detail: `already ${claim.existing.outcome}` } };
  }

  let outcome: ActionOutcome;
  let detail: string;
  let error: Error | undefined;
  if (!MUTATING_KINDS.has(action.target.kind)) {
    ({ outcome, detail } = await carryOut(action, deps.clusters, deps.github));
  } else if (action.dryRun) {
    outcome = 'dry-run';
    detail = 'dry run: no call made';
  } else {
    ({ outcome, detail, error } = await carryOut(action, deps.clusters, deps.github));
  }
  await deps.store.finishAction(action.key, outcome, now, detail);

  await deps.bus.publish([remediationEvent(action, outcome, detail, now)]);
  const dimensions = {
    rule: action.rule,
    cause: action.cause?.kind ?? 'none',
    outcome,
  };
  deps.metrics.count('Remediation', dimensions);
  const lossAt = MUTATING_KINDS.has(action.target.kind) ? lossTime(action, facts) : null;
  if (lossAt !== null)
    deps.metrics.milliseconds('LossToAction', { rule: action.rule }, now - lossAt);
  const log = outcome === 'failed' || outcome === 'gave-up' ? deps.log.warn : deps.log.info;
  log('remediation', { ...base, outcome, detail, reason: action.reason, scope: action.scope });
  return { report: { ...base, outcome, detail }, ...(error ? { error } : {}) };
}

/**
 * The sweep reads every org's self-hosted runner registrations (rule 5, and the offline check
 * that finds a pod re-created with a spent JIT config), remembering when each went offline.
 */
async function refreshRegistrations(
  stored: StoredFacts,
  deps: EngineDeps,
  now: number,
): Promise<void> {
  const installations = new Map<string, number | null>();
  for (const job of stored.jobs) {
    const owner = job.repository.owner;
    if (!installations.get(owner)) installations.set(owner, job.installationId);
  }
  if (installations.size === 0) return;
  const previous = new Map(
    stored.registrations.map((r) => [`${JSON.stringify(r.owner)}#${r.id}`, r]),
  );
  const fresh: RunnerRegistration[] = [];
  for (const [org, installationId] of installations) {
    for (const runner of await deps.github.listRunners({ org }, installationId)) {
      const before = previous.get(`${JSON.stringify(runner.owner)}#${runner.id}`);
      const offline = runner.status === 'offline';
      fresh.push({ ...runner, offlineSince: offline ? (before?.offlineSince ?? now) : null });
    }
  }
  await deps.store.replaceRegistrations(fresh, now);
}

/**
 * When the runner behind an action was lost: the earliest loss recorded for it, else (for a job
 * found lost through its annotations) when GitHub failed the job.
 */
function lossTime(action: Action, facts: Facts): number | null {
  const { cluster, namespace, runnerName } = action.scope;
  const fromLosses = facts.losses
    .filter(
      (l) => l.cluster === cluster && l.namespace === namespace && l.runnerName === runnerName,
    )
    .map((l) => l.at);
  const jobIds = 'jobIds' in action.target ? action.target.jobIds : [];
  const fromJobs = facts.jobs
    .filter((j) => jobIds.includes(j.job.jobId) && j.job.completedAt !== null)
    .map((j) => Date.parse(j.job.completedAt ?? ''));
  const times = [...fromLosses, ...fromJobs].filter(
    (at): at is number => at !== null && Number.isFinite(at),
  );
  return times.length > 0 ? Math.min(...times) : null;
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
