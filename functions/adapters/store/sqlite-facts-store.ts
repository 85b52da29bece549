import type { Action, ActionOutcome, ActionTarget } from '../../domain/model/action.js';
import { actionJobIds } from '../../domain/model/action-job-ids.js';
import type { JobAnnotation } from '../../domain/classify/annotations.js';
import type * as Fact from '../../domain/model/facts.js';
import type { BreakerGate } from '../../domain/decide/rules/circuit-breaker.js';
import type { Loss, NodeSignal, RunnerWarning } from '../../domain/model/loss.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import {
  emptyStoredFacts,
  mergeReads,
  type AuditRecord,
  type BreakerAdmission,
  type ClaimResult,
  type CountedLoss,
  type DueWake,
  type FactsStore,
  type PendingAudit,
  type RunnerRef,
  type StaleClaim,
  type StoreRead,
  type StoredFacts,
  type SweepCursor,
} from '../../ports/facts-store.js';
import type { SqliteDatabase } from './sqlite-database.js';
import {
  clusterSignalsKey,
  finishedJobsKeys,
  jobGroupKey,
  queuedJobsKey,
  timeKey,
  wakeKey,
  wakeOf,
} from './table-schema.js';
import { fileFact } from './file-fact.js';

const DAY = 24 * 3600;
/** How long each kind of fact is kept (seconds), as on DynamoDB. */
const TTL = {
  job: 3 * DAY,
  owner: 3 * DAY,
  run: 3 * DAY,
  loss: DAY,
  nodeSignal: DAY,
  instance: 2 * DAY,
  runnerOnNode: DAY,
  runnerWarning: DAY,
  erJob: 2 * DAY,
  missingPod: DAY,
  registration: DAY,
  breaker: DAY,
  scaleSet: 7 * DAY,
  action: 35 * DAY,
  wake: 2 * DAY,
  cursor: DAY,
  failure: DAY,
} as const;

type FactKind = keyof typeof TTL;

/** An unchanged owner or instance item is written again this often (their TTLs: 3 and 2 days). */
const RENEW_S = DAY;

const JOB_STAGE: Record<string, number> = { queued: 0, waiting: 1, in_progress: 2, completed: 3 };
const RETRYABLE: readonly string[] = ['retry-later', 'failed'];
/** Failures of one subject within this window count toward setting it aside. */
const FAILURE_WINDOW_S = 6 * 3600;
const FAILURES_BEFORE_SET_ASIDE = 5;

/** An item as the DynamoDB table holds it: keys, index keys, `expiresAt` and attributes. */
type Item = Record<string, unknown> & { pk: string; sk: string };

const INDEX_COLUMN = {
  byRunnerName: 'rn',
  byRun: 'run',
  byGroup: 'grp',
  byPending: 'pend',
} as const;
type IndexName = keyof typeof INDEX_COLUMN;
type Where = { pk: string; skBelow?: string } | { index: IndexName; key: string };

const runnerPk = (cluster: string, namespace: string, name: string) =>
  `RUNNER#${cluster}/${namespace}/${name}`;
const jobPk = (repo: string, jobId: number) => `JOB#${repo}#${jobId}`;
const runKey = (repo: string, runId: number) => `RUN#${repo}#${runId}`;
const nameKey = (name: string) => `RN#${name}`;
const nsKey = (cluster: string, namespace: string) => `NS#${cluster}/${namespace}`;
const breakerPk = (cluster: string, scaleSet: string | null) =>
  `BREAKER#${cluster}#${scaleSet ?? '*'}`;
const ownerKey = (owner: Fact.RunnerRegistration['owner']) =>
  'org' in owner ? owner.org : (owner.repo.split('/')[0] ?? owner.repo);
const pad = timeKey;
const seconds = (ms: number) => Math.floor(ms / 1000);
const DAY_MS = DAY * 1000;
const auditDay = (at: number) => `AUDIT#${new Date(at).toISOString().slice(0, 10)}`;

/**
 * The facts store over SQLite, item for item the layout of the DynamoDB table (the same keys,
 * indexes, times to live and conditions), so that the two answer every read alike. Where DynamoDB
 * writes one conditional item, this runs one `BEGIN IMMEDIATE` transaction that reads the row,
 * checks the same condition in code and writes: the condition holds at commit because no other
 * writer can commit between the read and the write. A row past its time to live is read as
 * absent, everywhere a DynamoDB condition treats an expired item as absent, and purged.
 */
export class SqliteFactsStore implements FactsStore {
  constructor(private readonly db: SqliteDatabase) {}

  // ---- reads by subject ----

  async readJob(repo: string, jobId: number, now: number): Promise<StoreRead> {
    const own = this.query({ pk: jobPk(repo, jobId) }, now);
    const starvation = this.query({ index: 'byRun', key: jobPk(repo, jobId) }, now);
    return mergeReads(own, starvation);
  }

  async readRun(repo: string, runId: number, now: number): Promise<StoreRead> {
    return this.query({ index: 'byRun', key: runKey(repo, runId) }, now);
  }

  async readRunnerName(name: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byRunnerName', key: nameKey(name) }, now);
  }

  async readNamespace(cluster: string, namespace: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: nsKey(cluster, namespace) }, now);
  }

  async readNode(cluster: string, nodeName: string, now: number) {
    const read = this.query({ pk: `NODE#${cluster}#${nodeName}` }, now);
    const runnersOnNode = read.extra
      .filter((i) => i.type === 'runnerOnNode')
      .map((i) => i.data as Fact.RunnerOnNode);
    // Here its runners are placements, decided as remembered runners, not job caches to join.
    return { ...read, facts: { ...read.facts, erJobCache: [] }, runners: [], runnersOnNode };
  }

  async readClusterNodeSignals(cluster: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: clusterSignalsKey(cluster) }, now);
  }

  async readInstance(instanceId: string, now: number) {
    const read = this.query({ pk: `INSTANCE#${instanceId}` }, now);
    const node = read.extra.find((i) => i.type === 'instance')?.data as
      { cluster: string; nodeName: string } | undefined;
    return { node: node ?? null, read };
  }

  async readBreaker(cluster: string, scaleSet: string | null, now: number): Promise<StoreRead> {
    return this.query({ pk: breakerPk(cluster, scaleSet) }, now);
  }

  async readScaleSets(now: number) {
    const item = this.read('read the scale sets', () => this.get('SCALESETS', 'ALL', now));
    return {
      sets: (item?.data as Record<string, string[]> | undefined) ?? {},
      itemsRead: item ? 1 : 0,
    };
  }

  async recordScaleSets(
    cluster: string,
    sets: Record<string, string[]>,
    now: number,
  ): Promise<void> {
    this.write(`record the scale sets of ${cluster}`, now, () => {
      const before = (this.get('SCALESETS', 'ALL', now)?.data ?? null) as Record<
        string,
        string[]
      > | null;
      // Additive: a location that no longer holds runners only costs a read that finds nothing.
      const merged: Record<string, string[]> = { ...before };
      let changed = before === null || Object.keys(before).length === 0;
      for (const [name, locations] of Object.entries(sets)) {
        const next = [...new Set([...(merged[name] ?? []), ...locations])].sort();
        changed ||= next.length !== (merged[name] ?? []).length;
        merged[name] = next;
      }
      if (changed) this.put(this.item('scaleSet', 'SCALESETS', 'ALL', merged, now));
    });
  }

  async readQueuedJobs(owner: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: queuedJobsKey(owner) }, now);
  }

  async readFinishedJobs(from: number, to: number, now: number): Promise<StoreRead> {
    const keys = finishedJobsKeys(from, to);
    return mergeReads(...keys.map((key) => this.query({ index: 'byGroup', key }, now)));
  }

  async readRegistrations(owner: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: `REGS#${owner}` }, now);
  }

  async knownOwners(now: number) {
    const read = this.query({ index: 'byGroup', key: 'OWNERS' }, now);
    return read.extra
      .filter((i) => i.type === 'owner')
      .map((i) => i.data as { owner: string; installationId: number | null });
  }

  /** Every live item, for tests and inspection only: the engine never reads the whole table. */
  async scanAll(now: number): Promise<StoredFacts> {
    const out = emptyStoredFacts();
    const rows = this.read('scan the facts', () =>
      this.db
        .statement(
          'SELECT item FROM facts WHERE (expires_at IS NULL OR expires_at >= ?) ORDER BY pk, sk',
        )
        .all(seconds(now)),
    );
    for (const row of rows) file(out, [], parse(row.item));
    return out;
  }

  // ---- writes ----

  async recordJob(record: Fact.JobRecord, now: number): Promise<void> {
    const rank = record.job.runAttempt * 10 + (JOB_STAGE[record.job.status] ?? 0);
    const { fullName: repo, owner } = record.repository;
    const id = jobPk(repo, record.job.jobId);
    const group = jobGroupKey(record, now);
    this.write(`record job ${id}`, now, () => {
      // A later attempt or a later stage wins; older input is dropped.
      const old = this.get(id, 'JOB', now);
      if (old && Number(old.rank) > rank) return;
      this.put({
        ...this.item('job', id, 'JOB', record, now),
        rank,
        run: runKey(repo, record.job.runId),
        ...(record.job.runnerName ? { rn: nameKey(record.job.runnerName) } : {}),
        ...(group === null ? {} : { grp: group }),
      });
      if (record.installationId !== null) {
        const data = { owner, installationId: record.installationId };
        if (!this.fresh(`OWNER#${owner}`, 'OWNER', data, 'owner', now))
          this.put({ ...this.item('owner', `OWNER#${owner}`, 'OWNER', data, now), grp: 'OWNERS' });
      }
    });
  }

  async recordRun(record: Fact.RunRecord, now: number): Promise<void> {
    const key = runKey(record.repository.fullName, record.run.runId);
    this.putOne('run', key, `RUN#${pad(record.run.runAttempt)}`, record, now, { run: key });
  }

  async setJobAnnotations(
    repo: string,
    jobId: number,
    annotations: JobAnnotation[],
    now: number,
  ): Promise<void> {
    this.write(`annotate job ${repo}#${jobId}`, now, () => {
      const item = this.get(jobPk(repo, jobId), 'JOB', now);
      if (!item) return;
      this.put({ ...item, data: { ...(item.data as object), annotations } });
    });
  }

  async recordLoss(loss: Loss, now: number): Promise<void> {
    const sk = ['LOSS', loss.cause.kind, loss.podUid ?? ''].join('#');
    // A loss without a time starts its grace period when it was recorded, never at epoch 0.
    const timed = { ...loss, at: loss.at ?? now };
    this.putOne('loss', runnerPk(loss.cluster, loss.namespace, loss.runnerName), sk, timed, now, {
      rn: nameKey(loss.runnerName),
      grp: nsKey(loss.cluster, loss.namespace),
    });
  }

  async recordNodeSignal(signal: NodeSignal, now: number): Promise<void> {
    const sk = ['SIGNAL', signal.kind, signal.nodeName ?? '', signal.instanceId ?? ''].join('#');
    this.write('record a node signal', now, () => {
      if (signal.cluster !== null && signal.nodeName !== null)
        this.put({
          ...this.item('nodeSignal', `NODE#${signal.cluster}#${signal.nodeName}`, sk, signal, now),
          grp: clusterSignalsKey(signal.cluster),
        });
      if (signal.instanceId !== null)
        this.put(this.item('nodeSignal', `INSTANCE#${signal.instanceId}`, sk, signal, now));
    });
  }

  async recordInstance(
    instanceId: string,
    cluster: string,
    nodeName: string,
    now: number,
  ): Promise<void> {
    const pk = `INSTANCE#${instanceId}`;
    // A node keeps its instance for life: an unchanged item is renewed daily, not each time.
    this.write(`record instance ${instanceId}`, now, () => {
      if (!this.fresh(pk, 'NODE', { cluster, nodeName }, 'instance', now))
        this.put(this.item('instance', pk, 'NODE', { cluster, nodeName }, now));
    });
  }

  async recordRunnerOnNode(runner: Fact.RunnerOnNode, now: number): Promise<void> {
    const pk = `NODE#${runner.cluster}#${runner.nodeName}`;
    const sk = `RUNNER#${runner.namespace}/${runner.name}`;
    this.write(`record runnerOnNode ${pk}`, now, () => {
      // The first sight is kept: a placement without a job is written only where there is none,
      // and one with its job only where no live record holds a job yet.
      const held = this.get(pk, sk, now);
      if (held && (!runner.job || (held.data as Fact.RunnerOnNode).job)) return;
      this.put({
        ...this.item('runnerOnNode', pk, sk, runner, now),
        rn: nameKey(runner.name),
        grp: nsKey(runner.cluster, runner.namespace),
      });
    });
  }

  async recordRunnerWarning(warning: RunnerWarning, now: number): Promise<void> {
    const at = { ...warning, name: warning.runnerName };
    this.putOnRunner('runnerWarning', at, `WARN#${warning.kind}`, warning, now);
  }

  async cacheErJob(entry: Fact.ErJobCacheEntry, now: number): Promise<void> {
    const at = { ...entry, name: entry.runnerName };
    this.putOnRunner('erJob', at, 'ERJOB', entry, now, true);
  }

  async recordMissingPod(pod: Fact.MissingPod, now: number): Promise<void> {
    this.putOnRunner('missingPod', pod, 'MISSING', pod, now, true);
  }

  /** An item in a runner's partition, indexed by its name and by its namespace. */
  private putOnRunner(
    kind: FactKind,
    runner: { cluster: string; namespace: string; name: string },
    sk: string,
    data: object,
    now: number,
    keepFirst = false,
  ): void {
    const pk = runnerPk(runner.cluster, runner.namespace, runner.name);
    const indexes = { rn: nameKey(runner.name), grp: nsKey(runner.cluster, runner.namespace) };
    this.putOne(kind, pk, sk, data, now, indexes, keepFirst);
  }

  async clearMissingPod(cluster: string, namespace: string, name: string): Promise<void> {
    this.remove(`clear missing pod ${name}`, runnerPk(cluster, namespace, name), 'MISSING');
  }

  async putRegistration(registration: Fact.RunnerRegistration, now: number): Promise<void> {
    const owner = ownerKey(registration.owner);
    this.putOne('registration', `REG#${owner}#${registration.id}`, 'REG', registration, now, {
      rn: nameKey(registration.name),
      grp: `REGS#${owner}`,
    });
  }

  async deleteRegistration(registration: Fact.RunnerRegistration): Promise<void> {
    this.remove(
      `forget registration ${registration.id}`,
      `REG#${ownerKey(registration.owner)}#${registration.id}`,
      'REG',
    );
  }

  // ---- breakers ----

  async countLoss(loss: CountedLoss, windowMs: number, now: number): Promise<void> {
    const { cluster, scaleSet, runner, at } = loss;
    const key = breakerPk(cluster, scaleSet);
    this.write(`count a loss in ${key}`, now, () => {
      const item = this.get(key, 'BREAKER', now);
      const expiresAt = seconds(now) + TTL.breaker;
      if (!item) {
        this.put({
          pk: key,
          sk: 'BREAKER',
          cluster,
          scaleSet,
          losses: { [runner]: at },
          held: [],
          expiresAt,
        });
        return;
      }
      const losses = lossesOf(item);
      // A runner counts once, whoever writes first; entries past the window go in the same write.
      if (runner in losses) return;
      this.put({
        ...item,
        losses: { ...withinWindow(losses, now - windowMs), [runner]: at },
        expiresAt,
      });
    });
  }

  async openBreaker(
    cluster: string,
    scaleSet: string | null,
    trippedAt: number,
    openUntil: number,
    now: number,
  ): Promise<void> {
    const key = breakerPk(cluster, scaleSet);
    this.write(`open breaker ${key}`, now, () => {
      const item = this.get(key, 'BREAKER', now);
      // Kept open for its window: a later trip moves it on only once the last one has passed.
      if (typeof item?.openUntil === 'number' && item.openUntil >= trippedAt) return;
      this.put({
        ...(item ?? { pk: key, sk: 'BREAKER' }),
        trippedAt,
        openUntil,
        held: [],
        cluster,
        scaleSet,
        expiresAt: seconds(now) + TTL.breaker,
        losses: item ? lossesOf(item) : {},
      });
    });
  }

  async passBreaker(
    gate: BreakerGate,
    loss: Pick<CountedLoss, 'runner' | 'at'> | null,
    now: number,
  ): Promise<BreakerAdmission> {
    const key = breakerPk(gate.cluster, gate.scaleSet);
    // The read, the check and the count in one transaction: no other pass commits between them.
    const admission = this.write(`pass breaker ${key}`, now, (): BreakerAdmission => {
      const item = this.get(key, 'BREAKER', now);
      const verdict = admit(item, gate, loss, now);
      if ('why' in verdict) return { passed: false, why: verdict.why, until: verdict.until };
      this.put({
        ...(item ?? { pk: key, sk: 'BREAKER' }),
        cluster: item && 'cluster' in item ? item.cluster : gate.cluster,
        scaleSet: item && 'scaleSet' in item ? item.scaleSet : gate.scaleSet,
        held: item?.held ?? [],
        losses: verdict.losses,
        expiresAt: seconds(now) + TTL.breaker,
      });
      return { passed: true };
    });
    return admission;
  }

  async holdInBreaker(
    cluster: string,
    scaleSet: string | null,
    subjects: string[],
    now: number,
  ): Promise<void> {
    const key = breakerPk(cluster, scaleSet);
    this.write(`hold in breaker ${key}`, now, () => {
      const item = this.get(key, 'BREAKER', now);
      if (!item) return;
      const held = (item.held as string[] | undefined) ?? [];
      const fresh = subjects.filter((s) => !held.includes(s));
      if (fresh.length > 0) this.put({ ...item, held: [...held, ...fresh] });
    });
  }

  // ---- actions and the audit outbox ----

  async claimAction(action: Action, now: number, staleAfterMs: number): Promise<ClaimResult> {
    const record: Fact.ActionRecord = {
      key: action.key,
      kind: action.target.kind,
      rule: action.rule,
      claimedAt: now,
      outcome: 'claimed',
      finishedAt: null,
      dryRun: action.dryRun,
      budgetKeys: action.budgetKeys,
      jobIds: actionJobIds(action.target),
    };
    const pk = `ACTION#${action.key}`;
    const result = this.write(`claim action ${action.key}`, now, (): ClaimResult => {
      const existing = this.get(pk, 'ACTION', now);
      // Claimable: new, expired, last outcome asks for a retry, or a claim left without result.
      const claimable =
        !existing ||
        RETRYABLE.includes(String(existing.outcome)) ||
        (existing.outcome === 'claimed' && Number(existing.claimedAt) < now - staleAfterMs);
      if (!claimable) return { claimed: false, existing: existing.data as Fact.ActionRecord };
      this.put({
        ...this.item('action', pk, 'ACTION', record, now),
        ...actionIndexes(action),
        pend: 'CLAIM',
        outcome: 'claimed',
        claimedAt: now,
        target: action.target,
        action,
      });
      return { claimed: true, previous: (existing?.data as Fact.ActionRecord | undefined) ?? null };
    });
    return result;
  }

  async finishAction(
    key: string,
    outcome: ActionOutcome,
    now: number,
    detail: string,
    audit?: PendingAudit['event'],
  ): Promise<void> {
    this.write(`finish action ${key}`, now, () => {
      const item = this.get(`ACTION#${key}`, 'ACTION', now);
      if (!item) throw new StoreError(`could not finish action ${key}: it holds no claim`);
      const data = { ...(item.data as object), outcome, finishedAt: now, detail };
      const next: Item = { ...item, outcome, data };
      // With an audit event: the outbox (`pend`, `audit`, until published) and the trail
      // (`trail`, indexed by day in `grp`, kept with the action) that `replay` reads.
      if (audit) Object.assign(next, { pend: 'OUTBOX', audit, trail: audit, grp: auditDay(now) });
      else delete next.pend;
      this.put(next);
    });
  }

  async markPublished(key: string): Promise<void> {
    this.write(`mark ${key} published`, null, () => {
      const item = this.get(`ACTION#${key}`, 'ACTION', 0);
      if (item?.pend !== 'OUTBOX') return;
      const next: Item = { ...item };
      delete next.pend;
      delete next.audit;
      this.put(next);
    });
  }

  async auditTrail(since: number, until: number, limit: number): Promise<AuditRecord[]> {
    const out: AuditRecord[] = [];
    for (let day = since - (since % DAY_MS); day <= until && out.length < limit; day += DAY_MS) {
      const items = this.items({ index: 'byGroup', key: auditDay(day) }, 0, limit - out.length);
      for (const i of items) {
        const at = (i.data as { finishedAt?: unknown } | undefined)?.finishedAt;
        if (i.trail === undefined || typeof at !== 'number' || at < since || at > until) continue;
        out.push({ at, ...(i.trail as PendingAudit['event']) });
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }

  async unpublishedAudits(limit: number): Promise<PendingAudit[]> {
    const items = this.items({ index: 'byPending', key: 'OUTBOX' }, 0, limit);
    return items
      .filter((i) => i.audit !== undefined)
      .map((i) => ({
        key: i.pk.slice('ACTION#'.length),
        event: i.audit as PendingAudit['event'],
      }));
  }

  async staleClaims(now: number, staleAfterMs: number): Promise<StaleClaim[]> {
    const items = this.items({ index: 'byPending', key: 'CLAIM' }, now);
    return items
      .filter((item) => item.outcome === 'claimed' && Number(item.claimedAt) < now - staleAfterMs)
      .map((item) => ({
        key: item.pk.slice('ACTION#'.length),
        target: item.target as ActionTarget,
        claimedAt: Number(item.claimedAt),
        action: (item.action as Action | undefined) ?? null,
      }));
  }

  // ---- timers ----

  async nextWake(now: number): Promise<number | null> {
    const item = this.read('read the next wake-up', () => this.get('WAKE', 'NEXT', now));
    const at = (item?.data as { at?: number } | undefined)?.at;
    return typeof at === 'number' && at > now ? at : null;
  }

  async scheduleWake(
    at: number,
    now: number,
    subjects: string[] = [],
    position?: number,
  ): Promise<void> {
    this.write('schedule a wake-up', now, () => {
      if (subjects.length > 0) {
        const wake = { at, subjects, ...(position === undefined ? {} : { position }) };
        this.put(this.item('wake', 'WAKES', wakeKey(at, subjects, position), wake, now));
      }
      // One wake per moment: the earliest still to come is kept.
      const next = (this.get('WAKE', 'NEXT', now)?.data as { at?: number } | undefined)?.at;
      if (next === undefined || next <= now || next > at)
        this.put(this.item('wake', 'WAKE', 'NEXT', { at }, now));
    });
  }

  async dueWakes(now: number, limit: number): Promise<DueWake[]> {
    const items = this.items({ pk: 'WAKES', skBelow: `${pad(now)}#\uffff` }, now, limit);
    return items.map((i) => wakeOf(String(i.sk), i.data));
  }

  async clearWake(wake: DueWake): Promise<void> {
    this.remove('clear a wake-up', 'WAKES', wake.key);
  }

  // ---- the sweep's place, and subjects that keep failing ----

  async repositoryScan(owner: string): Promise<number> {
    const item = this.read('read a repository scan', () =>
      this.get(`REPOSCAN#${owner}`, 'CURSOR', 0),
    );
    const next = (item?.data as { next?: unknown } | undefined)?.next;
    return typeof next === 'number' && Number.isSafeInteger(next) && next >= 0 ? next : 0;
  }

  async setRepositoryScan(owner: string, next: number, now: number): Promise<void> {
    this.putOne('cursor', `REPOSCAN#${owner}`, 'CURSOR', { next }, now);
  }

  async sweepCursor(cluster: string): Promise<SweepCursor | null> {
    const item = this.read('read a sweep cursor', () => this.get(`SWEEP#${cluster}`, 'CURSOR', 0));
    return (item?.data as SweepCursor | undefined) ?? null;
  }

  async setSweepCursor(cluster: string, cursor: SweepCursor | null, now: number): Promise<void> {
    if (cursor === null) this.remove('clear sweep cursor', `SWEEP#${cluster}`, 'CURSOR');
    else this.putOne('cursor', `SWEEP#${cluster}`, 'CURSOR', cursor, now);
  }

  async noteFailure(subject: string, now: number) {
    const failures = this.write(`count a failure of ${subject}`, now, () => {
      const item = this.get(`FAIL#${subject}`, 'FAIL', now);
      // The window runs from the first failure: later ones do not move it on.
      const next = {
        pk: `FAIL#${subject}`,
        sk: 'FAIL',
        failures: Number(item?.failures ?? 0) + 1,
        expiresAt: item ? Number(item.expiresAt) : seconds(now) + FAILURE_WINDOW_S,
      };
      this.put(next);
      return next.failures;
    });
    return { failures, setAside: failures >= FAILURES_BEFORE_SET_ASIDE };
  }

  async setAside(subject: string, until: number, now: number): Promise<void> {
    this.putOne('failure', `ASIDE#${subject}`, 'ASIDE', { until }, now);
  }

  async isSetAside(subject: string, now: number): Promise<boolean> {
    const item = this.read(`read whether ${subject} is set aside`, () =>
      this.get(`ASIDE#${subject}`, 'ASIDE', now),
    );
    const until = (item?.data as { until?: number } | undefined)?.until;
    return typeof until === 'number' && until > now;
  }

  // ---- plumbing ----

  private item(kind: FactKind, pk: string, sk: string, data: unknown, now: number): Item {
    return { pk, sk, type: kind, data, expiresAt: seconds(now) + TTL[kind] };
  }

  /**
   * Whether the live item holds `data` already and was written less than RENEW_S ago: an item
   * that changes rarely (an owner's installation, an instance's node) is renewed daily, as the
   * DynamoDB store does, instead of with every fact that names it.
   */
  private fresh(pk: string, sk: string, data: object, kind: FactKind, now: number): boolean {
    const item = this.get(pk, sk, now);
    if (!item || JSON.stringify(item.data) !== JSON.stringify(data)) return false;
    return Number(item.expiresAt) - TTL[kind] > seconds(now) - RENEW_S;
  }

  /** Writes one item; with `keepFirst`, only where no live one is already. */
  private putOne(
    kind: FactKind,
    pk: string,
    sk: string,
    data: unknown,
    now: number,
    extra: Record<string, unknown> = {},
    keepFirst = false,
  ): void {
    this.write(`record ${kind} ${pk}`, now, () => {
      if (keepFirst && this.get(pk, sk, now)) return;
      this.put({ ...this.item(kind, pk, sk, data, now), ...extra });
    });
  }

  /** One write transaction; a write with a time also purges expired rows now and then. */
  private write<T>(what: string, now: number | null, body: () => T): T {
    return this.db.transaction(
      what,
      body,
      now === null ? undefined : { nowSeconds: seconds(now), tables: ['facts'] },
    );
  }

  private read<T>(what: string, body: () => T): T {
    return this.db.read(what, body);
  }

  private remove(what: string, pk: string, sk: string): void {
    this.db.transaction(what, () => {
      this.db.statement('DELETE FROM facts WHERE pk = ? AND sk = ?').run(pk, sk);
    });
  }

  /** The live item at `pk`/`sk`; with `now` 0, an expired one too (not yet purged). */
  private get(pk: string, sk: string, now: number): Item | null {
    const row = this.db
      .statement('SELECT item, expires_at FROM facts WHERE pk = ? AND sk = ?')
      .get(pk, sk);
    if (!row) return null;
    if (typeof row.expires_at === 'number' && row.expires_at < seconds(now)) return null;
    return parse(row.item);
  }

  private put(item: Item): void {
    const column = (name: string) => (typeof item[name] === 'string' ? item[name] : null);
    this.db
      .statement(
        'INSERT OR REPLACE INTO facts (pk, sk, expires_at, rn, run, grp, pend, item) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        item.pk,
        item.sk,
        typeof item.expiresAt === 'number' ? item.expiresAt : null,
        column('rn'),
        column('run'),
        column('grp'),
        column('pend'),
        JSON.stringify(item),
      );
  }

  /** Live items of a partition (in sort-key order) or of an index key, at most `limit`. */
  private items(where: Where, now: number, limit = -1): Item[] {
    const [sql, key] =
      'index' in where
        ? [`${INDEX_COLUMN[where.index]} = ?`, where.key]
        : [where.skBelow !== undefined ? 'pk = ? AND sk <= ?' : 'pk = ?', where.pk];
    const params = 'pk' in where && where.skBelow !== undefined ? [key, where.skBelow] : [key];
    const rows = this.read(`read ${key}`, () =>
      this.db
        .statement(
          `SELECT item FROM facts WHERE ${sql} AND (expires_at IS NULL OR expires_at >= ?) ORDER BY sk, pk LIMIT ?`,
        )
        .all(...params, seconds(now), limit),
    );
    return rows.map((row) => parse(row.item));
  }

  private query(where: Where, now: number): StoreRead & { extra: Item[] } {
    const items = this.items(where, now);
    const out: StoreRead & { extra: Item[] } = {
      facts: emptyStoredFacts(),
      runners: [],
      itemsRead: items.length,
      extra: [],
    };
    for (const item of items) if (!file(out.facts, out.runners, item)) out.extra.push(item);
    return out;
  }
}

/** The index keys an action is filed under: its runner's name, its run, or its job. */
function actionIndexes(action: Action): Record<string, string> {
  const t = action.target;
  const out: Record<string, string> = {};
  const runner = action.scope.runnerName;
  if (runner) out.rn = nameKey(runner);
  if ('repo' in t && 'runId' in t) out.run = runKey(t.repo, t.runId);
  else if (t.kind === 'report-starvation') out.run = jobPk(t.repo, t.jobId);
  return out;
}

const lossesOf = (item: Item) => (item.losses as Record<string, number> | undefined) ?? {};

const withinWindow = (losses: Record<string, number>, cutoff: number) =>
  Object.fromEntries(Object.entries(losses).filter(([, t]) => t > cutoff));

/**
 * A breaker's verdict on one destructive call, from its item as read in the transaction: held
 * while open, or while the live losses in its window (the call's own, fresh and not yet counted,
 * included) reach the limit; else passed, with the losses to write: the live ones and the call's.
 */
function admit(
  item: Item | null,
  gate: BreakerGate,
  loss: Pick<CountedLoss, 'runner' | 'at'> | null,
  now: number,
): { why: string; until: number } | { losses: Record<string, number> } {
  const where = `${gate.cluster}${gate.scaleSet ? `/${gate.scaleSet}` : ''}`;
  const openUntil = typeof item?.openUntil === 'number' ? item.openUntil : null;
  if (openUntil !== null && openUntil > now)
    return { why: `circuit breaker open on ${where} until ${iso(openUntil)}`, until: openUntil };
  const cutoff = now - gate.windowMs;
  const live = withinWindow(item ? lossesOf(item) : {}, cutoff);
  const adds = loss !== null && loss.at > cutoff && !(loss.runner in live);
  const times = [...Object.values(live), ...(adds ? [loss.at] : [])].sort((a, b) => a - b);
  const until = times[times.length - gate.limit];
  if (until !== undefined)
    return {
      why: `circuit breaker open: ${times.length} losses in ${gate.windowMs / 1000} s on ${where} (threshold ${gate.limit})`,
      until: until + gate.windowMs,
    };
  return { losses: adds ? { ...live, [loss.runner]: loss.at } : live };
}

const iso = (ms: number) => new Date(ms).toISOString();

function parse(text: unknown): Item {
  if (typeof text !== 'string') throw new StoreError('a facts row holds no item');
  return JSON.parse(text) as Item;
}

/** Files one item into a facts slice by its type; false when it is not a fact. */
function file(facts: StoredFacts, runners: RunnerRef[], item: Item): boolean {
  if (fileFact(facts, runners, String(item.type), item.data)) return true;
  if (!item.pk.startsWith('BREAKER#')) return false;
  facts.breakers.push({
    cluster: String(item.cluster),
    scaleSet: typeof item.scaleSet === 'string' ? item.scaleSet : null,
    losses: lossesOf(item),
    trippedAt: typeof item.trippedAt === 'number' ? item.trippedAt : null,
    openUntil: typeof item.openUntil === 'number' ? item.openUntil : null,
    held: (item.held as string[] | undefined) ?? [],
  });
  return true;
}
