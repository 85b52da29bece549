import { MUTATING_KINDS } from '../domain/model/action.js';
import type { Action, ActionOutcome, Decision, HeldAction, Need } from '../domain/model/action.js';
import { correlate } from '../domain/correlate/correlate.js';
import { breakerGates, type BreakerGate } from '../domain/decide/rules/circuit-breaker.js';
import { decide } from '../domain/decide/decide.js';
import type { Facts } from '../domain/model/facts.js';
import type { Policy } from '../domain/policy/policy.js';
import { resolvePolicy } from '../domain/policy/resolve-policy.js';
import { carryOut } from './carry-out.js';
import { dedupeFacts } from './dedupe-facts.js';
import { explainAction, withLossTime } from './explain-action.js';
import { lossTime } from './loss-time.js';
import { gatherSlice, readRunnersOfRun, rememberAsJobCache, type Slice } from './gather-slice.js';
import { noteSightings, recordTrigger } from './record-trigger.js';
import { remediationEvent } from './remediation-event.js';
import { dedupe, subjectFromKey, subjectKey, subjectsOf, type Subject } from './subjects.js';
import { decideNamespace, runSweep } from './sweep.js';
import { STALE_CLAIM_MS, type EngineDeps } from './engine-deps.js';
import type { Trigger } from '../ports/trigger.js';

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
  /** Store items read for the decisions of this run. */
  storeItemsRead: number;
}

const MAX_NEED_ROUNDS = 3;
/** A subject whose cluster or org failed is tried again after this, doubling, then set aside. */
const RETRY_BASE_MS = 30_000;
const SET_ASIDE_MS = 6 * 3600_000;
const WAKES_PER_RUN = 200;

/**
 * observe → correlate → decide → act, for the subjects a trigger names. Safe under duplicate
 * and concurrent invocations: every action is claimed in the store before it runs. One cluster
 * or org that cannot be reached fails only its own subjects.
 */
export async function runEngine(trigger: Trigger, deps: EngineDeps): Promise<EngineReport> {
  const now = deps.clock.now();
  await noteSightings(trigger, deps.clusters.clusters(), deps.sightings, now, deps.log);
  const accepted = dropForeignEvents(trigger, deps);
  const { recorded, ignored } = (await concernsAScaleSet(accepted, deps, now))
    ? await recordTrigger(accepted, deps.store, now)
    : { recorded: 0, ignored: ['a job for no scale set runner-medic knows'] };
  for (const reason of ignored) deps.log.info('input not acted on', { reason });
  if (ignored.length > 0) deps.metrics.count('InputIgnored', { trigger: trigger.kind });

  const policy = await deps.policy();
  const report: EngineReport = {
    recorded,
    ignored,
    actions: [],
    held: [],
    wakeAt: null,
    storeItemsRead: 0,
  };
  if (accepted.kind === 'sweep') {
    await runSweep(deps, policy, now, (subjects, slice) =>
      decideAndAct(subjects, slice, policy, now, deps, report),
    );
    return report;
  }
  let subjects = recorded > 0 || accepted.kind !== 'observation' ? subjectsOf(accepted) : [];
  if (accepted.kind === 'wake') {
    const due = await deps.store.dueWakes(now, WAKES_PER_RUN);
    for (const w of due) await deps.store.clearWake(w);
    subjects = dedupe(
      due.flatMap((w) => w.subjects.map(subjectFromKey)).filter((s): s is Subject => s !== null),
    );
  }
  const live: Subject[] = [];
  for (const s of subjects) if (!(await deps.store.isSetAside(subjectKey(s), now))) live.push(s);
  const decideSlice = (these: Subject[], slice: Slice) =>
    decideAndAct(these, slice, policy, now, deps, report);
  if (accepted.kind === 'wake') {
    // Timers are decided one by one in the order they fell due: work a breaker held is decided
    // again in the order it was held. A runner an earlier decision of this run held behind an
    // open breaker is not decided again: the breaker would hold it again, and its close wakes it
    // (a mass loss would otherwise read every runner of the run once for each of them).
    for (const s of live) {
      if (s.kind === 'runner' && report.held.some((h) => heldByBreaker(h) && holds(h, s))) continue;
      if (s.kind === 'namespace')
        await decideNamespace(s.cluster, s.namespace, deps, now, decideSlice);
      else await decideSlice([s], await gatherSlice([s], deps, now));
    }
    return report;
  }
  for (const s of live)
    if (s.kind === 'namespace')
      await decideNamespace(s.cluster, s.namespace, deps, now, decideSlice);
  const rest = live.filter((s) => s.kind !== 'namespace');
  if (rest.length > 0) await decideSlice(rest, await gatherSlice(rest, deps, now));
  return report;
}

/**
 * A job webhook concerns runner-medic only when one of its labels names a scale set the sweep
 * has seen (a GitHub-hosted job, or one for other self-hosted runners, does not): one store
 * read, and nothing else. Before the first sweep has seen any scale set, every job counts.
 */
async function concernsAScaleSet(
  trigger: Trigger,
  deps: EngineDeps,
  now: number,
): Promise<boolean> {
  if (trigger.kind !== 'observation' || trigger.observation.kind === 'run.completed') return true;
  const { sets } = await deps.store.readScaleSets(now);
  if (Object.keys(sets).length === 0) return true;
  return trigger.observation.job.labels.some((l) => sets[l.toLowerCase()] !== undefined);
}

/**
 * Events naming a cluster that is not configured are rejected here and never stored; events of
 * pods outside a cluster's configured runner namespaces are ignored here.
 */
function dropForeignEvents(trigger: Trigger, deps: EngineDeps): Trigger {
  if (trigger.kind !== 'cluster' || trigger.input.kind !== 'kube-events') return trigger;
  const known = new Set(deps.clusters.clusters());
  const events = trigger.input.events.filter((e) => {
    if (!known.has(e.cluster)) {
      deps.log.warn('input rejected', { reason: 'unknown-cluster', cluster: e.cluster });
      deps.metrics.count('InputRejected', { reason: 'unknown-cluster' });
      return false;
    }
    // A pod outside the cluster's runner namespaces is not a runner: nothing to read or store.
    const namespaces = deps.clusters.namespaces(e.cluster);
    const pod = e.involvedObject;
    if (pod.kind === 'Pod' && namespaces !== null && !namespaces.includes(pod.namespace ?? '')) {
      deps.log.info('input not acted on', { reason: 'pod outside the runner namespaces' });
      deps.metrics.count('InputIgnored', { trigger: trigger.kind });
      return false;
    }
    return true;
  });
  return { kind: 'cluster', input: { ...trigger.input, events } };
}

/** Decides for one slice, acts, books the breakers and keeps its timers as data. */
async function decideAndAct(
  subjects: Subject[],
  slice: Slice,
  policy: Policy,
  now: number,
  deps: EngineDeps,
  report: EngineReport,
): Promise<void> {
  report.storeItemsRead += slice.itemsRead;
  const retryAt = await isolateFailures(subjects, slice, now, deps);
  // Every slice, the sweep's namespace slice included, counts an item read twice once.
  const facts = dedupeFacts(slice.facts);
  const decision = await decideWithNeeds(facts, policy, now, deps);
  await countConfirmedLosses(facts, policy, now, deps);
  const failedActions = await actOnAll(decision, facts, policy, now, deps, report);
  for (const held of decision.held) {
    deps.log.info('action held by a guardrail', { ...held });
    report.held.push(held);
  }
  for (const hold of breakerHolds(decision, facts, now))
    await holdInBreaker(hold, facts, now, deps);
  for (const held of decision.held)
    if (held.why.startsWith('re-run budget')) await reportGaveUp(held, now, deps);

  let retryActionsAt: number | null = null;
  if (failedActions > 0) {
    for (const s of subjects) {
      const { failures } = await deps.store.noteFailure(subjectKey(s), now);
      retryActionsAt = earliest(
        retryActionsAt,
        now + RETRY_BASE_MS * 2 ** Math.min(failures - 1, 8),
      );
    }
  }
  const wakeAt = earliest(earliest(decision.wakeAt, retryAt), retryActionsAt);
  if (wakeAt !== null) await scheduleDecideAgain(wakeAt, subjects, decision, now, deps, report);
}

/** Carries out each action; one that throws fails alone. Returns how many failed. */
async function actOnAll(
  decision: Decision,
  facts: Facts,
  policy: Policy,
  now: number,
  deps: EngineDeps,
  report: EngineReport,
): Promise<number> {
  let failedActions = 0;
  for (const action of decision.actions) {
    let acted: ActionReport;
    try {
      const refused = await passBreakers(action, facts, policy, now, deps);
      if (refused) {
        holdRefused(action, refused, decision, facts);
        continue;
      }
      acted = await act(action, facts, now, deps);
    } catch (error) {
      // An action that throws fails alone: recorded as failed, its subjects retried with
      // backoff and set aside if it keeps failing; the other actions still run.
      deps.log.warn('action threw', { key: action.key, error: (error as Error).message });
      deps.metrics.count('ActionError', { rule: action.rule });
      await deps.store
        .finishAction(action.key, 'failed', now, `threw: ${(error as Error).message}`)
        .catch(() => undefined);
      failedActions++;
      continue;
    }
    report.actions.push(acted);
    if (acted.outcome === 'failed') failedActions++;
    if (action.target.kind === 'trip-breaker' && acted.outcome !== 'skipped') {
      const t = action.target;
      await deps.store.openBreaker(t.cluster, t.scaleSet, now, now + t.windowSeconds * 1000, now);
    }
  }
  return failedActions;
}

/** A breaker that held a destructive call as it was claimed: which, why, and until when. */
interface BreakerRefusal {
  gate: BreakerGate;
  why: string;
  until: number;
}

/**
 * A destructive call passes its breakers (its scale set's, then its cluster's) before it is
 * claimed, each with one conditional write that checks the breaker and counts the loss the call
 * acts on (FactsStore.passBreaker): an invocation whose slice missed other invocations' losses
 * cannot act past a breaker they filled, nor two invocations both pass its last free place.
 */
async function passBreakers(
  action: Action,
  facts: Facts,
  policy: Policy,
  now: number,
  deps: EngineDeps,
): Promise<BreakerRefusal | null> {
  const { gates, runner } = breakerGates(policy, action);
  const at = runner === null ? null : lossTime(action, facts);
  const loss = runner !== null && at !== null ? { runner, at } : null;
  for (const gate of gates) {
    const pass = await deps.store.passBreaker(gate, loss, now);
    if (!pass.passed) return { gate, why: pass.why, until: pass.until };
  }
  return null;
}

/**
 * A call a breaker held is held as the guardrails hold one: unclaimed, listed on the breaker,
 * and decided again when it closes. The slice's view of that breaker takes the store's answer.
 */
function holdRefused(
  action: Action,
  refused: BreakerRefusal,
  decision: Decision,
  facts: Facts,
): void {
  const { cluster, scaleSet } = refused.gate;
  decision.held.push({
    key: action.key,
    rule: action.rule,
    kind: action.target.kind,
    scope: action.scope,
    why: refused.why,
  });
  const seen = facts.breakers.find((b) => b.cluster === cluster && b.scaleSet === scaleSet);
  if (seen) seen.openUntil = Math.max(seen.openUntil ?? 0, refused.until);
  else
    facts.breakers.push({
      cluster,
      scaleSet,
      losses: {},
      trippedAt: null,
      openUntil: refused.until,
      held: [],
    });
}

/** What one open breaker holds of this decision: subject keys, and when it closes. */
interface BreakerHold {
  cluster: string;
  scaleSet: string | null;
  keys: string[];
  closesAt: number | null;
}

/** Held by an open circuit breaker (guardrails.ts), whose close decides it again. */
function heldByBreaker(held: HeldAction): boolean {
  return held.why.startsWith('circuit breaker open');
}

/** Whether a held action was this runner's. */
function holds(held: HeldAction, runner: Extract<Subject, { kind: 'runner' }>): boolean {
  const { cluster, namespace, runnerName } = held.scope;
  return cluster === runner.cluster && namespace === runner.namespace && runnerName === runner.name;
}

/** The runners a breaker held in this decision, grouped by the breaker (stored, or just tripped). */
function breakerHolds(decision: Decision, facts: Facts, now: number): BreakerHold[] {
  const holds = new Map<string, BreakerHold>();
  for (const held of decision.held) {
    const { cluster, namespace, runnerName, scaleSet } = held.scope;
    if (!heldByBreaker(held) || !cluster || !namespace || !runnerName) continue;
    const open = facts.breakers.find(
      (b) =>
        b.cluster === cluster &&
        (b.scaleSet === null || b.scaleSet === scaleSet) &&
        b.openUntil !== null &&
        b.openUntil > now,
    );
    const tripped = decision.actions.find(
      (a) =>
        a.target.kind === 'trip-breaker' &&
        a.target.cluster === cluster &&
        (a.target.scaleSet === null || a.target.scaleSet === scaleSet),
    );
    const trip = tripped?.target.kind === 'trip-breaker' ? tripped.target : null;
    const openSet = open ? open.scaleSet : (trip?.scaleSet ?? null);
    const k = `${cluster}#${openSet ?? '*'}`;
    const closesAt = open?.openUntil ?? (trip ? now + trip.windowSeconds * 1000 : null);
    const entry = holds.get(k) ?? { cluster, scaleSet: openSet, keys: [], closesAt };
    entry.keys.push(subjectKey({ kind: 'runner', cluster, namespace, name: runnerName }));
    holds.set(k, entry);
  }
  return [...holds.values()];
}

/**
 * Books what a breaker newly holds. When it closes, what it held is decided again in the order
 * it was held: timers at its close, in their place in its list, decided one by one before other
 * timers then. Its audit trail lists what it holds, so an operator sees the work it stopped.
 */
async function holdInBreaker(
  h: BreakerHold,
  facts: Facts,
  now: number,
  deps: EngineDeps,
): Promise<void> {
  const before = facts.breakers.find((b) => b.cluster === h.cluster && b.scaleSet === h.scaleSet);
  const fresh = h.keys.filter((k) => !(before?.held ?? []).includes(k));
  if (fresh.length === 0) return;
  await deps.store.holdInBreaker(h.cluster, h.scaleSet, fresh, now);
  if (h.closesAt !== null) {
    const due = await deps.store.nextWake(now);
    await deps.store.scheduleWake(h.closesAt, now, fresh, before?.held.length ?? 0);
    if (due === null || h.closesAt < due) await deps.wake?.wakeAt(h.closesAt);
  }
  await deps.bus.publish([
    {
      source: 'runner-medic',
      detailType: 'BreakerHolding',
      time: new Date(now),
      detail: {
        cluster: h.cluster,
        scaleSet: h.scaleSet,
        trippedAt: before?.trippedAt ?? null,
        openUntil: before?.openUntil ?? null,
        held: [...(before?.held ?? []), ...fresh],
      },
    },
  ]);
  deps.metrics.count('BreakerHolding', { cluster: h.cluster });
}

/** Keeps a timer as data: at `wakeAt`, decide again for these subjects. */
async function scheduleDecideAgain(
  wakeAt: number,
  subjects: Subject[],
  decision: Decision,
  now: number,
  deps: EngineDeps,
  report: EngineReport,
): Promise<void> {
  // After a cancel, its run is decided again too: the force-cancel and the re-run follow it
  // even when the runner that led to it is gone from the trigger's subjects.
  const runsCancelled: Subject[] = decision.actions.flatMap((a) =>
    a.target.kind === 'cancel-run' || a.target.kind === 'force-cancel-run'
      ? [{ kind: 'run' as const, repo: a.target.repo, runId: a.target.runId }]
      : [],
  );
  // A namespace's timers that are each one runner's wake those runners alone: their objects are
  // read by GET then, not the whole namespace listed.
  const runners: Subject[] = (decision.wakeRunners ?? []).map((r) => ({ kind: 'runner', ...r }));
  const narrowed =
    decision.wakeRunners === null ? subjects : subjects.filter((s) => s.kind !== 'namespace');
  const woken = narrowed.length < subjects.length ? [...narrowed, ...runners] : subjects;
  const keys = dedupe([...woken, ...runsCancelled]).map(subjectKey);
  const due = await deps.store.nextWake(now);
  await deps.store.scheduleWake(wakeAt, now, keys);
  // One wake-up per moment: a wake already due no later than this one will decide again.
  if (due === null || wakeAt < due) await deps.wake?.wakeAt(wakeAt);
  report.wakeAt = earliest(report.wakeAt, wakeAt);
}

/**
 * An exhausted re-run budget is a final answer: one `gave-up` audit event (through the outbox,
 * keyed so it is told once) and a metric, as a trip or a starving queue is.
 */
async function reportGaveUp(held: HeldAction, now: number, deps: EngineDeps): Promise<void> {
  const action: Action = {
    key: `${held.key}:gave-up`,
    rule: held.rule,
    target: { kind: 'schedule-retry', retryOf: held.key, at: now },
    scope: held.scope,
    cause: null,
    signal: null,
    reason: held.why,
    dryRun: false,
    budgetKeys: [],
  };
  const claim = await deps.store.claimAction(action, now, deps.staleClaimMs ?? STALE_CLAIM_MS);
  if (!claim.claimed) return;
  const event = remediationEvent(action, 'gave-up', held.why, now);
  const detail = {
    ...(event.detail as Record<string, unknown>),
    action: held.kind,
    gaveUp: held.key,
  };
  await deps.store.finishAction(action.key, 'gave-up', now, held.why, {
    detailType: event.detailType,
    detail,
  });
  await deps.bus.publish([{ ...event, detail }]);
  await deps.store.markPublished(action.key);
  deps.metrics.count('RerunBudgetExhausted', { rule: held.rule });
  deps.log.warn('re-run budget exhausted', { key: held.key, why: held.why, scope: held.scope });
}

/**
 * A cluster that could not be read fails only its subjects: reported, retried with backoff
 * through a timer, and set aside with an audit event once it keeps failing.
 */
async function isolateFailures(
  subjects: Subject[],
  slice: Slice,
  now: number,
  deps: EngineDeps,
): Promise<number | null> {
  let retryAt: number | null = null;
  for (const { cluster, error } of slice.unavailable) {
    deps.log.warn('cluster unavailable', { cluster, error: error.message });
    deps.metrics.count('ClusterUnavailable', { cluster });
    for (const s of subjects.filter((x) => 'cluster' in x && x.cluster === cluster)) {
      const key = subjectKey(s);
      const { failures, setAside } = await deps.store.noteFailure(key, now);
      if (setAside) {
        await deps.store.setAside(key, now + SET_ASIDE_MS, now);
        deps.metrics.count('SubjectSetAside', { cluster });
        await deps.bus.publish([
          {
            source: 'runner-medic',
            detailType: 'SubjectSetAside',
            time: new Date(now),
            detail: {
              subject: key,
              cluster,
              failures,
              reason: error.message,
              until: now + SET_ASIDE_MS,
            },
          },
        ]);
        continue;
      }
      retryAt = earliest(retryAt, now + RETRY_BASE_MS * 2 ** Math.min(failures - 1, 8));
    }
  }
  return retryAt;
}

/** The breaker counts a runner's loss once it is confirmed by the live objects of this slice. */
async function countConfirmedLosses(
  facts: Facts,
  policy: Policy,
  now: number,
  deps: EngineDeps,
): Promise<void> {
  for (const v of correlate(facts, now).runners) {
    if (!v.arcOwned || !v.loss || v.lostAt === null || (!v.pod && !v.er)) continue;
    const cb = resolvePolicy(policy, {
      cluster: v.cluster,
      namespace: null,
      scaleSet: v.scaleSet,
      repo: null,
    }).rules.circuitBreaker;
    const windowMs = cb.windowSeconds * 1000;
    if (!cb.enabled || v.lostAt <= now - windowMs) continue;
    const runner = `${v.cluster}/${v.namespace}/${v.name}`;
    for (const scaleSet of v.scaleSet ? [null, v.scaleSet] : [null]) {
      const stored = facts.breakers.find((b) => b.cluster === v.cluster && b.scaleSet === scaleSet);
      if (stored && runner in stored.losses) continue;
      await deps.store.countLoss(
        { cluster: v.cluster, scaleSet, runner, at: v.lostAt },
        windowMs,
        now,
      );
    }
  }
}

async function decideWithNeeds(
  facts: Facts,
  policy: Policy,
  now: number,
  deps: EngineDeps,
): Promise<Decision> {
  let decision = decide(facts, policy, now);
  const failedOrgs = new Set<string>();
  for (let round = 0; round < MAX_NEED_ROUNDS && decision.needs.length > 0; round++) {
    deps.log.info('reading more facts', { needs: decision.needs });
    let learned = false;
    for (const need of decision.needs) {
      const org = 'repo' in need ? (need.repo.split('/')[0] ?? need.repo) : null;
      if (org && failedOrgs.has(org)) continue;
      try {
        if (await readNeed(need, facts, now, deps)) learned = true;
      } catch (error) {
        // One org or cluster that cannot be read fails only what needs it.
        if (org) {
          failedOrgs.add(org);
          deps.log.warn('installation unavailable', { org, error: (error as Error).message });
          deps.metrics.count('InstallationUnavailable', { org });
        } else if ('cluster' in need) {
          deps.log.warn('cluster unavailable', {
            cluster: need.cluster,
            error: (error as Error).message,
          });
          deps.metrics.count('ClusterUnavailable', { cluster: need.cluster });
        }
      }
    }
    if (failedOrgs.size > 0) {
      facts.jobs = facts.jobs.filter((j) => !failedOrgs.has(j.repository.owner));
      facts.runs = facts.runs.filter((r) => !failedOrgs.has(r.repository.owner));
    }
    if (!learned && failedOrgs.size === 0) break;
    decision = decide(facts, policy, now);
  }
  return decision;
}

/** Reads what a decision asked for into `facts`; true when something was learned. */
async function readNeed(need: Need, facts: Facts, now: number, deps: EngineDeps): Promise<boolean> {
  switch (need.kind) {
    case 'annotations': {
      const ref = { repo: need.repo, installationId: need.installationId };
      const annotations = await deps.github.listAnnotations(ref, need.jobId);
      await deps.store.setJobAnnotations(need.repo, need.jobId, annotations, now);
      facts.jobs = facts.jobs.map((j) =>
        j.repository.fullName === need.repo && j.job.jobId === need.jobId
          ? { ...j, annotations }
          : j,
      );
      return true;
    }
    case 'run': {
      const ref = { repo: need.repo, installationId: need.installationId };
      const run = await deps.github.getRun(ref, need.runId);
      const job = facts.jobs.find((j) => j.repository.fullName === need.repo);
      if (!run || !job) return false;
      const record = { repository: job.repository, installationId: need.installationId, run };
      await deps.store.recordRun(record, now);
      facts.runs = [...facts.runs.filter((r) => r.run.runId !== run.runId), record];
      return true;
    }
    case 'runners-of-run': {
      // A cluster that cannot be read leaves its runners unseen: rule 4 counts them as live.
      for (const { cluster, error } of await readRunnersOfRun(need, facts, deps, now)) {
        deps.log.warn('cluster unavailable', { cluster, error: error.message });
        deps.metrics.count('ClusterUnavailable', { cluster });
      }
      return true;
    }
    case 'runner-objects': {
      const gateway = await deps.clusters.forCluster(need.cluster);
      const [pod, er] = await Promise.all([
        gateway.getPod(need.namespace, need.name),
        gateway.getEphemeralRunner(need.namespace, need.name),
      ]);
      if (pod) facts.pods = [...facts.pods, pod];
      if (er) facts.ephemeralRunners = [...facts.ephemeralRunners, er];
      // Read, or found gone: the memory of it no longer stands for it, but its record's job
      // fields do, as its job cache (its EphemeralRunner may be gone).
      rememberAsJobCache(
        facts,
        (r) => r.cluster === need.cluster && r.namespace === need.namespace && r.name === need.name,
      );
      // Looked up by name: as good as a listing for it, so absent means gone (rule 3's evidence).
      if (!facts.listings.some((l) => l.cluster === need.cluster && l.namespace === need.namespace))
        facts.listings = [
          ...facts.listings,
          { cluster: need.cluster, namespace: need.namespace, at: now },
        ];
      return true;
    }
    case 'ephemeral-runner': {
      const gateway = await deps.clusters.forCluster(need.cluster);
      const er = await gateway.getEphemeralRunner(need.namespace, need.name);
      if (er && !facts.ephemeralRunners.some((e) => e.metadata.uid === er.metadata.uid))
        facts.ephemeralRunners = [...facts.ephemeralRunners, er];
      const listed = facts.listings.some(
        (l) => l.cluster === need.cluster && l.namespace === need.namespace,
      );
      if (!er && !listed)
        facts.listings = [
          ...facts.listings,
          { cluster: need.cluster, namespace: need.namespace, at: now },
        ];
      return true;
    }
  }
}

async function act(
  action: Action,
  facts: Facts,
  now: number,
  deps: EngineDeps,
): Promise<ActionReport> {
  const base = {
    key: action.key,
    kind: action.target.kind,
    rule: action.rule,
    dryRun: action.dryRun,
  };
  const claim = await deps.store.claimAction(action, now, deps.staleClaimMs ?? STALE_CLAIM_MS);
  if (!claim.claimed) {
    return { ...base, outcome: 'skipped', detail: `already ${claim.existing.outcome}` };
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
  // The outbox: the audit event is stored with the result, then published from there.
  const lossAt = MUTATING_KINDS.has(action.target.kind) ? lossTime(action, facts) : null;
  const event = withLossTime(remediationEvent(action, outcome, detail, now), lossAt);
  await deps.store.finishAction(action.key, outcome, now, detail, {
    detailType: event.detailType,
    detail: event.detail as Record<string, unknown>,
  });
  await deps.afterAct?.(action);
  await deps.bus.publish([event]);
  await explainAction(
    { detailType: event.detailType, detail: event.detail as Record<string, unknown> },
    deps,
  );
  await deps.store.markPublished(action.key);

  const dimensions = { rule: action.rule, cause: action.cause?.kind ?? 'none', outcome };
  deps.metrics.count('Remediation', dimensions);
  if (action.recoveredBy)
    deps.metrics.count('JobRecovered', { path: action.recoveredBy, rule: action.rule });
  if (action.target.kind === 'report-deprecated-runner')
    deps.metrics.count('RunnerDeprecated', { scaleSet: action.target.scaleSet });
  if (lossAt !== null)
    deps.metrics.milliseconds('LossToAction', { rule: action.rule }, now - lossAt);
  // An outcome that is not what was asked for is a warning; an `unknown` one says which run
  // and attempt to look at (it is settled by reading the run, never by sending again).
  const warn = outcome === 'failed' || outcome === 'gave-up' || outcome === 'unknown';
  const t = action.target;
  const run = 'runAttempt' in t ? { repo: t.repo, runId: t.runId, runAttempt: t.runAttempt } : {};
  (warn ? deps.log.warn : deps.log.info)('remediation', {
    ...base,
    ...run,
    outcome,
    detail,
    reason: action.reason,
    scope: action.scope,
  });
  if (error)
    deps.log.warn('action failed; it will be retried', { key: action.key, error: error.message });
  return { ...base, outcome, detail };
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
