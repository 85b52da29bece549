import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Action, ActionOutcome, ActionTarget } from '../../domain/model/action.js';
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
import type { JobAnnotation } from '../../domain/classify/annotations.js';
import type * as Fact from '../../domain/model/facts.js';
import type { BreakerGate } from '../../domain/decide/rules/circuit-breaker.js';
import type { Loss, NodeSignal, RunnerWarning } from '../../domain/model/loss.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import {
  emptyStoredFacts,
  mergeReads,
  type BreakerAdmission,
  type ClaimResult,
  type CountedLoss,
  type AuditRecord,
  type DueWake,
  type FactsStore,
  type PendingAudit,
  type RunnerRef,
  type StaleClaim,
  type StoreRead,
  type StoredFacts,
  type SweepCursor,
} from '../../ports/facts-store.js';

const DAY = 24 * 3600;
/** How long each kind of fact is kept (seconds). Actions outlive GitHub's 30-day re-run window. */
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
const RENEW_MS = DAY * 1000;

const JOB_STAGE: Record<string, number> = { queued: 0, waiting: 1, in_progress: 2, completed: 3 };
const RETRYABLE: ActionOutcome[] = ['retry-later', 'failed'];
/** Failures of one subject within this window count toward setting it aside. */
const FAILURE_WINDOW_S = 6 * 3600;
const FAILURES_BEFORE_SET_ASIDE = 5;
/** Tries of a breaker pass whose write lost a race (the item changed between read and write). */
const PASS_ATTEMPTS = 8;
/** Entries past a breaker's window one write takes out (the rest go in later writes). */
const PRUNE_PER_WRITE = 25;

type Item = Record<string, unknown>;

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

/**
 * The remediation facts on the single table, one partition per subject (see table-schema.ts for
 * the indexes). Every write is a single-item put or conditional update, so it runs on dynalite.
 */
export class DynamoFactsStore implements FactsStore {
  /**
   * Owner and instance items this store (one a container) wrote, which nothing but their TTL
   * removes: an unchanged one is not written again until RENEW_MS has passed.
   */
  private readonly ownersWritten = new Map<string, { installationId: number; at: number }>();
  private readonly instancesWritten = new Map<string, { node: string; at: number }>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  // ---- reads by subject ----

  async readJob(repo: string, jobId: number, now: number): Promise<StoreRead> {
    const [own, starvation] = await Promise.all([
      this.query({ pk: jobPk(repo, jobId) }, now),
      this.query({ index: 'byRun', key: jobPk(repo, jobId) }, now),
    ]);
    return mergeReads(own, starvation);
  }

  readRun(repo: string, runId: number, now: number): Promise<StoreRead> {
    return this.query({ index: 'byRun', key: runKey(repo, runId) }, now);
  }

  readRunnerName(name: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byRunnerName', key: nameKey(name) }, now);
  }

  readNamespace(cluster: string, namespace: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: nsKey(cluster, namespace) }, now);
  }

  async readNode(cluster: string, nodeName: string, now: number) {
    const read = await this.query({ pk: `NODE#${cluster}#${nodeName}` }, now);
    const runnersOnNode = read.extra
      .filter((i) => i.type === 'runnerOnNode')
      .map((i) => i.data as Fact.RunnerOnNode);
    // Here its runners are placements, decided as remembered runners, not job caches to join.
    return { ...read, facts: { ...read.facts, erJobCache: [] }, runners: [], runnersOnNode };
  }

  readClusterNodeSignals(cluster: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: clusterSignalsKey(cluster) }, now);
  }

  async readInstance(instanceId: string, now: number) {
    const read = await this.query({ pk: `INSTANCE#${instanceId}` }, now);
    const node = read.extra.find((i) => i.type === 'instance')?.data as
      { cluster: string; nodeName: string } | undefined;
    return { node: node ?? null, read };
  }

  readBreaker(cluster: string, scaleSet: string | null, now: number): Promise<StoreRead> {
    return this.query({ pk: breakerPk(cluster, scaleSet) }, now);
  }

  async readScaleSets(now: number) {
    const item = await this.getItem('SCALESETS', 'ALL', now);
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
    const { sets: before } = await this.readScaleSets(now);
    // Additive: a location that no longer holds runners only costs a GET that finds nothing.
    const merged: Record<string, string[]> = { ...before };
    let changed = false;
    for (const [name, locations] of Object.entries(sets)) {
      const next = [...new Set([...(merged[name] ?? []), ...locations])].sort();
      changed ||= next.length !== (merged[name] ?? []).length;
      merged[name] = next;
    }
    if (changed || Object.keys(before).length === 0)
      await this.put('scaleSet', 'SCALESETS', 'ALL', merged, now);
    void cluster;
  }

  readQueuedJobs(owner: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: queuedJobsKey(owner) }, now);
  }

  async readFinishedJobs(from: number, to: number, now: number): Promise<StoreRead> {
    const keys = finishedJobsKeys(from, to);
    return mergeReads(
      ...(await Promise.all(keys.map((key) => this.query({ index: 'byGroup', key }, now)))),
    );
  }

  readRegistrations(owner: string, now: number): Promise<StoreRead> {
    return this.query({ index: 'byGroup', key: `REGS#${owner}` }, now);
  }

  async knownOwners(now: number) {
    const read = await this.query({ index: 'byGroup', key: 'OWNERS' }, now);
    return read.extra
      .filter((i) => i.type === 'owner')
      .map((i) => i.data as { owner: string; installationId: number | null });
  }

  /** Every live item, for tests and inspection only: the engine never reads the whole table. */
  async scanAll(now: number): Promise<StoredFacts> {
    const out = emptyStoredFacts();
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: startKey }),
      );
      for (const item of page.Items ?? []) if (live(item, now)) file(out, [], item);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return out;
  }

  // ---- writes ----

  async recordJob(record: Fact.JobRecord, now: number): Promise<void> {
    const rank = record.job.runAttempt * 10 + (JOB_STAGE[record.job.status] ?? 0);
    const { fullName: repo, owner } = record.repository;
    const id = jobPk(repo, record.job.jobId);
    const group = jobGroupKey(record, now);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...this.item('job', id, 'JOB', record, now),
            rank,
            run: runKey(repo, record.job.runId),
            ...(record.job.runnerName ? { rn: nameKey(record.job.runnerName) } : {}),
            ...(group === null ? {} : { grp: group }),
          },
          ConditionExpression: 'attribute_not_exists(pk) OR #rank <= :rank OR expiresAt < :now',
          ExpressionAttributeNames: { '#rank': 'rank' },
          ExpressionAttributeValues: { ':rank': rank, ':now': seconds(now) },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw new StoreError(`could not record job ${id}`, { cause: error });
    }
    if (record.installationId !== null) await this.noteOwner(owner, record.installationId, now);
  }

  /**
   * The owner item (the sweep's list of orgs) changes only when an org's installation does, so
   * it is written when this container has not written it, when the installation differs, or
   * once a day to outlive its TTL; not with every job of the org.
   */
  private async noteOwner(owner: string, installationId: number, now: number): Promise<void> {
    const was = this.ownersWritten.get(owner);
    if (was && was.installationId === installationId && now - was.at < RENEW_MS) return;
    await this.put('owner', `OWNER#${owner}`, 'OWNER', { owner, installationId }, now, {
      grp: 'OWNERS',
    });
    this.ownersWritten.set(owner, { installationId, at: now });
  }

  async recordRun(record: Fact.RunRecord, now: number): Promise<void> {
    const key = runKey(record.repository.fullName, record.run.runId);
    await this.put('run', key, `RUN#${pad(record.run.runAttempt)}`, record, now, { run: key });
  }

  async setJobAnnotations(
    repo: string,
    jobId: number,
    annotations: JobAnnotation[],
    now: number,
  ): Promise<void> {
    await this.send(
      `annotate job ${repo}#${jobId}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: jobPk(repo, jobId), sk: 'JOB' },
        UpdateExpression: 'SET #data.annotations = :annotations',
        ConditionExpression: 'attribute_exists(pk) AND expiresAt >= :now',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: { ':annotations': annotations, ':now': seconds(now) },
      }),
      true,
    );
  }

  async recordLoss(loss: Loss, now: number): Promise<void> {
    const sk = ['LOSS', loss.cause.kind, loss.podUid ?? ''].join('#');
    // A loss without a time starts its grace period when it was recorded, never at epoch 0.
    const timed = { ...loss, at: loss.at ?? now };
    await this.put(
      'loss',
      runnerPk(loss.cluster, loss.namespace, loss.runnerName),
      sk,
      timed,
      now,
      {
        rn: nameKey(loss.runnerName),
        grp: nsKey(loss.cluster, loss.namespace),
      },
    );
  }

  async recordNodeSignal(signal: NodeSignal, now: number): Promise<void> {
    const sk = ['SIGNAL', signal.kind, signal.nodeName ?? '', signal.instanceId ?? ''].join('#');
    if (signal.cluster !== null && signal.nodeName !== null)
      await this.put('nodeSignal', `NODE#${signal.cluster}#${signal.nodeName}`, sk, signal, now, {
        grp: clusterSignalsKey(signal.cluster),
      });
    if (signal.instanceId !== null)
      await this.put('nodeSignal', `INSTANCE#${signal.instanceId}`, sk, signal, now);
  }

  async recordInstance(
    instanceId: string,
    cluster: string,
    nodeName: string,
    now: number,
  ): Promise<void> {
    // A node keeps its instance for life: written when new to this container, then daily.
    const was = this.instancesWritten.get(instanceId);
    if (was && was.node === `${cluster}/${nodeName}` && now - was.at < RENEW_MS) return;
    await this.put('instance', `INSTANCE#${instanceId}`, 'NODE', { cluster, nodeName }, now);
    this.instancesWritten.set(instanceId, { node: `${cluster}/${nodeName}`, at: now });
  }

  async recordRunnerOnNode(runner: Fact.RunnerOnNode, now: number): Promise<void> {
    const pk = `NODE#${runner.cluster}#${runner.nodeName}`;
    const Item = {
      ...this.item('runnerOnNode', pk, `RUNNER#${runner.namespace}/${runner.name}`, runner, now),
      rn: nameKey(runner.name),
      grp: nsKey(runner.cluster, runner.namespace),
    };
    // The first sight is kept: a placement without a job is written only where there is none,
    // and one with its job only where no live record holds a job yet.
    await this.send(
      `record runnerOnNode ${pk}`,
      new PutCommand({
        TableName: this.tableName,
        Item,
        ConditionExpression: runner.job
          ? 'attribute_not_exists(#data.#job) OR expiresAt < :now'
          : 'attribute_not_exists(pk) OR expiresAt < :now',
        ...(runner.job ? { ExpressionAttributeNames: { '#data': 'data', '#job': 'job' } } : {}),
        ExpressionAttributeValues: { ':now': seconds(now) },
      }),
      true,
    );
  }

  async recordRunnerWarning(warning: RunnerWarning, now: number): Promise<void> {
    const at = { ...warning, name: warning.runnerName };
    await this.putOnRunner('runnerWarning', at, `WARN#${warning.kind}`, warning, now);
  }

  async cacheErJob(entry: Fact.ErJobCacheEntry, now: number): Promise<void> {
    const at = { ...entry, name: entry.runnerName };
    await this.putOnRunner('erJob', at, 'ERJOB', entry, now, { keepFirst: true });
  }

  async recordMissingPod(pod: Fact.MissingPod, now: number): Promise<void> {
    await this.putOnRunner('missingPod', pod, 'MISSING', pod, now, { keepFirst: true });
  }

  /** An item in a runner's partition, indexed by its name and by its namespace. */
  private async putOnRunner(
    kind: FactKind,
    runner: { cluster: string; namespace: string; name: string },
    sk: string,
    data: object,
    now: number,
    options: { keepFirst?: boolean } = {},
  ): Promise<void> {
    const pk = runnerPk(runner.cluster, runner.namespace, runner.name);
    const indexes = { rn: nameKey(runner.name), grp: nsKey(runner.cluster, runner.namespace) };
    await this.put(kind, pk, sk, data, now, indexes, options.keepFirst);
  }

  async clearMissingPod(cluster: string, namespace: string, name: string): Promise<void> {
    await this.send(
      `clear missing pod ${name}`,
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: runnerPk(cluster, namespace, name), sk: 'MISSING' },
      }),
    );
  }

  async putRegistration(registration: Fact.RunnerRegistration, now: number): Promise<void> {
    const owner = ownerKey(registration.owner);
    await this.put('registration', `REG#${owner}#${registration.id}`, 'REG', registration, now, {
      rn: nameKey(registration.name),
      grp: `REGS#${owner}`,
    });
  }

  async deleteRegistration(registration: Fact.RunnerRegistration): Promise<void> {
    await this.send(
      `forget registration ${registration.id}`,
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: `REG#${ownerKey(registration.owner)}#${registration.id}`, sk: 'REG' },
      }),
    );
  }

  // ---- breakers ----

  async countLoss(loss: CountedLoss, windowMs: number, now: number): Promise<void> {
    const { cluster, scaleSet, runner, at } = loss;
    const key = breakerPk(cluster, scaleSet);
    const item = await this.getItem(key, 'BREAKER', now);
    if (!item) {
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk: key,
              sk: 'BREAKER',
              cluster,
              scaleSet,
              losses: { [runner]: at },
              held: [],
              expiresAt: seconds(now) + TTL.breaker,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException))
          throw new StoreError(`could not count a loss in ${key}`, { cause: error });
      }
    }
    const losses = (item?.losses as Record<string, number> | undefined) ?? {};
    if (runner in losses) return;
    // A runner counts once, whoever writes first; entries past the window go in the same write.
    const stale = Object.entries(losses)
      .filter(([, t]) => t <= now - windowMs)
      .map(([k]) => k)
      .slice(0, 50);
    const names: Record<string, string> = { '#losses': 'losses', '#r': runner };
    stale.forEach((k, i) => (names[`#s${i}`] = k));
    await this.send(
      `count a loss in ${key}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: key, sk: 'BREAKER' },
        UpdateExpression:
          'SET #losses.#r = :at, expiresAt = :exp' +
          (stale.length > 0 ? ` REMOVE ${stale.map((_, i) => `#losses.#s${i}`).join(', ')}` : ''),
        ConditionExpression: 'attribute_exists(#losses) AND attribute_not_exists(#losses.#r)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':at': at, ':exp': seconds(now) + TTL.breaker },
      }),
      true,
    );
  }

  async openBreaker(
    cluster: string,
    scaleSet: string | null,
    trippedAt: number,
    openUntil: number,
    now: number,
  ): Promise<void> {
    await this.send(
      `open breaker ${breakerPk(cluster, scaleSet)}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: breakerPk(cluster, scaleSet), sk: 'BREAKER' },
        UpdateExpression:
          'SET trippedAt = :t, openUntil = :u, held = :none, #cluster = :c, #set = :s, expiresAt = :exp, #losses = if_not_exists(#losses, :empty)',
        ConditionExpression: 'attribute_not_exists(openUntil) OR openUntil < :t',
        ExpressionAttributeNames: {
          '#losses': 'losses',
          '#cluster': 'cluster',
          '#set': 'scaleSet',
        },
        ExpressionAttributeValues: {
          ':t': trippedAt,
          ':u': openUntil,
          ':none': [],
          ':c': cluster,
          ':s': scaleSet,
          ':exp': seconds(now) + TTL.breaker,
          ':empty': {},
        },
      }),
      true,
    );
  }

  async passBreaker(
    gate: BreakerGate,
    loss: Pick<CountedLoss, 'runner' | 'at'> | null,
    now: number,
  ): Promise<BreakerAdmission> {
    const key = breakerPk(gate.cluster, gate.scaleSet);
    for (let attempt = 0; attempt < PASS_ATTEMPTS; attempt++) {
      const item = await this.getItem(key, 'BREAKER', now);
      const plan = passPlan(item, gate, loss, now);
      if ('why' in plan) return { passed: false, why: plan.why, until: plan.until };
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key, sk: 'BREAKER' },
            ...plan,
            ExpressionAttributeValues: {
              ...plan.ExpressionAttributeValues,
              ':exp': seconds(now) + TTL.breaker,
            },
          }),
        );
        return { passed: true };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException))
          throw new StoreError(`could not pass breaker ${key}`, { cause: error });
      }
    }
    // Another writer changed the item each time: fail the call (it is retried with backoff).
    throw new StoreError(`could not pass breaker ${key}: ${PASS_ATTEMPTS} writes lost a race`);
  }

  async holdInBreaker(
    cluster: string,
    scaleSet: string | null,
    subjects: string[],
    now: number,
  ): Promise<void> {
    const item = await this.getItem(breakerPk(cluster, scaleSet), 'BREAKER', now);
    const held = (item?.held as string[] | undefined) ?? [];
    const fresh = subjects.filter((s) => !held.includes(s));
    if (fresh.length === 0 || !item) return;
    await this.send(
      `hold in breaker ${breakerPk(cluster, scaleSet)}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: breakerPk(cluster, scaleSet), sk: 'BREAKER' },
        UpdateExpression: 'SET held = list_append(if_not_exists(held, :none), :fresh)',
        ExpressionAttributeValues: { ':none': [], ':fresh': fresh },
      }),
    );
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
      jobIds:
        'jobIds' in action.target
          ? action.target.jobIds
          : 'jobId' in action.target
            ? [action.target.jobId]
            : [],
    };
    try {
      const result = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...this.item('action', `ACTION#${action.key}`, 'ACTION', record, now),
            ...actionIndexes(action),
            pend: 'CLAIM',
            outcome: 'claimed',
            claimedAt: now,
            target: action.target,
            action,
          },
          ConditionExpression:
            'attribute_not_exists(pk) OR expiresAt < :nowSeconds OR outcome IN (:retry, :failed) OR (outcome = :claimed AND claimedAt < :stale)',
          ExpressionAttributeValues: {
            ':nowSeconds': seconds(now),
            ':retry': RETRYABLE[0],
            ':failed': RETRYABLE[1],
            ':claimed': 'claimed',
            ':stale': now - staleAfterMs,
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return {
        claimed: true,
        previous: (result.Attributes?.data as Fact.ActionRecord | undefined) ?? null,
      };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const existing = await this.getItem(`ACTION#${action.key}`, 'ACTION', now);
        if (!existing) throw new StoreError(`action ${action.key} vanished between claim and read`);
        return { claimed: false, existing: existing.data as Fact.ActionRecord };
      }
      throw new StoreError(`could not claim action ${action.key}`, { cause: error });
    }
  }

  async finishAction(
    key: string,
    outcome: ActionOutcome,
    now: number,
    detail: string,
    audit?: PendingAudit['event'],
  ): Promise<void> {
    await this.send(
      `finish action ${key}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `ACTION#${key}`, sk: 'ACTION' },
        // With an audit event: the outbox (`pend`, `audit`, until published) and the trail
        // (`trail`, indexed by day in `grp`, kept with the action) that `replay` reads.
        UpdateExpression: audit
          ? 'SET outcome = :outcome, #data.outcome = :outcome, #data.finishedAt = :now, #data.detail = :detail, pend = :outbox, audit = :audit, trail = :audit, grp = :day'
          : 'SET outcome = :outcome, #data.outcome = :outcome, #data.finishedAt = :now, #data.detail = :detail REMOVE pend',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: {
          ':outcome': outcome,
          ':now': now,
          ':detail': detail,
          ...(audit ? { ':outbox': 'OUTBOX', ':audit': audit, ':day': auditDay(now) } : {}),
        },
      }),
    );
  }

  async markPublished(key: string): Promise<void> {
    await this.send(
      `mark ${key} published`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `ACTION#${key}`, sk: 'ACTION' },
        UpdateExpression: 'REMOVE pend, audit',
        ConditionExpression: 'pend = :outbox',
        ExpressionAttributeValues: { ':outbox': 'OUTBOX' },
      }),
      true,
    );
  }

  async auditTrail(since: number, until: number, limit: number): Promise<AuditRecord[]> {
    const out: AuditRecord[] = [];
    for (let day = since - (since % DAY_MS); day <= until && out.length < limit; day += DAY_MS) {
      const items = await this.queryItems(
        { index: 'byGroup', key: auditDay(day) },
        limit - out.length,
      );
      for (const i of items) {
        const at = (i.data as { finishedAt?: unknown } | undefined)?.finishedAt;
        if (i.trail === undefined || typeof at !== 'number' || at < since || at > until) continue;
        out.push({ at, ...(i.trail as PendingAudit['event']) });
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }

  async unpublishedAudits(limit: number): Promise<PendingAudit[]> {
    const items = await this.queryItems({ index: 'byPending', key: 'OUTBOX' }, limit);
    return items
      .filter((i) => i.audit !== undefined)
      .map((i) => ({
        key: String(i.pk).slice('ACTION#'.length),
        event: i.audit as PendingAudit['event'],
      }));
  }

  async staleClaims(now: number, staleAfterMs: number): Promise<StaleClaim[]> {
    const items = await this.queryItems({ index: 'byPending', key: 'CLAIM' });
    return items
      .filter((item) => item.outcome === 'claimed' && Number(item.claimedAt) < now - staleAfterMs)
      .map((item) => ({
        key: String(item.pk).slice('ACTION#'.length),
        target: item.target as ActionTarget,
        claimedAt: Number(item.claimedAt),
        action: (item.action as Action | undefined) ?? null,
      }));
  }

  // ---- timers ----

  async nextWake(now: number): Promise<number | null> {
    const item = await this.getItem('WAKE', 'NEXT', now);
    const at = (item?.data as { at?: number } | undefined)?.at;
    return typeof at === 'number' && at > now ? at : null;
  }

  async scheduleWake(
    at: number,
    now: number,
    subjects: string[] = [],
    position?: number,
  ): Promise<void> {
    if (subjects.length > 0) {
      const wake = { at, subjects, ...(position === undefined ? {} : { position }) };
      await this.put('wake', 'WAKES', wakeKey(at, subjects, position), wake, now);
    }
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.item('wake', 'WAKE', 'NEXT', { at }, now),
          ConditionExpression: 'attribute_not_exists(pk) OR #data.#at <= :now OR #data.#at > :at',
          ExpressionAttributeNames: { '#data': 'data', '#at': 'at' },
          ExpressionAttributeValues: { ':now': now, ':at': at },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw new StoreError('could not schedule a wake-up', { cause: error });
    }
  }

  async dueWakes(now: number, limit: number): Promise<DueWake[]> {
    const items = await this.queryItems({ pk: 'WAKES', skBelow: `${pad(now)}#\uffff` }, limit);
    return items.map((i) => wakeOf(String(i.sk), i.data));
  }

  async clearWake(wake: DueWake): Promise<void> {
    await this.send(
      'clear a wake-up',
      new DeleteCommand({ TableName: this.tableName, Key: { pk: 'WAKES', sk: wake.key } }),
    );
  }

  // ---- the sweep's place, and subjects that keep failing ----

  async repositoryScan(owner: string): Promise<number> {
    const item = await this.getItem(`REPOSCAN#${owner}`, 'CURSOR', 0);
    const next = (item?.data as { next?: unknown } | undefined)?.next;
    return typeof next === 'number' && Number.isSafeInteger(next) && next >= 0 ? next : 0;
  }

  async setRepositoryScan(owner: string, next: number, now: number): Promise<void> {
    await this.put('cursor', `REPOSCAN#${owner}`, 'CURSOR', { next }, now);
  }

  async sweepCursor(cluster: string): Promise<SweepCursor | null> {
    const item = await this.getItem(`SWEEP#${cluster}`, 'CURSOR', 0);
    return (item?.data as SweepCursor | undefined) ?? null;
  }

  async setSweepCursor(cluster: string, cursor: SweepCursor | null, now: number): Promise<void> {
    if (cursor === null) {
      await this.send(
        'clear sweep cursor',
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: `SWEEP#${cluster}`, sk: 'CURSOR' },
        }),
      );
      return;
    }
    await this.put('cursor', `SWEEP#${cluster}`, 'CURSOR', cursor, now);
  }

  async noteFailure(subject: string, now: number) {
    const result = await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `FAIL#${subject}`, sk: 'FAIL' },
          UpdateExpression: 'ADD failures :one SET expiresAt = if_not_exists(expiresAt, :exp)',
          ExpressionAttributeValues: { ':one': 1, ':exp': seconds(now) + FAILURE_WINDOW_S },
          ReturnValues: 'ALL_NEW',
        }),
      )
      .catch((error: unknown) => {
        throw new StoreError(`could not count a failure of ${subject}`, { cause: error });
      });
    const failures = Number(result.Attributes?.failures ?? 1);
    return { failures, setAside: failures >= FAILURES_BEFORE_SET_ASIDE };
  }

  async setAside(subject: string, until: number, now: number): Promise<void> {
    await this.put('failure', `ASIDE#${subject}`, 'ASIDE', { until }, now);
  }

  async isSetAside(subject: string, now: number): Promise<boolean> {
    const item = await this.getItem(`ASIDE#${subject}`, 'ASIDE', now);
    const until = (item?.data as { until?: number } | undefined)?.until;
    return typeof until === 'number' && until > now;
  }

  // ---- plumbing ----

  private item(kind: FactKind, pk: string, sk: string, data: unknown, now: number) {
    return { pk, sk, type: kind, data, expiresAt: seconds(now) + TTL[kind] };
  }

  /** Writes an item; with `keepFirst`, only where none is (or an expired one is) already. */
  private async put(
    kind: FactKind,
    pk: string,
    sk: string,
    data: unknown,
    now: number,
    extra: Item = {},
    keepFirst = false,
  ): Promise<void> {
    const Item = { ...this.item(kind, pk, sk, data, now), ...extra };
    const onlyNew = {
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
      ExpressionAttributeValues: { ':now': seconds(now) },
    };
    await this.send(
      `record ${kind} ${pk}`,
      new PutCommand({ TableName: this.tableName, Item, ...(keepFirst ? onlyNew : {}) }),
      keepFirst,
    );
  }

  private async getItem(pk: string, sk: string, now: number): Promise<Item | null> {
    try {
      const r = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { pk, sk } }),
      );
      return r.Item && live(r.Item, now) ? r.Item : null;
    } catch (error) {
      throw new StoreError(`could not read ${pk}`, { cause: error });
    }
  }

  private async query(
    where: { pk: string } | { index: keyof typeof INDEX_ATTRIBUTE; key: string },
    now: number,
  ): Promise<StoreRead & { extra: Item[] }> {
    const items = await this.queryItems(where);
    const out: StoreRead & { extra: Item[] } = {
      facts: emptyStoredFacts(),
      runners: [],
      itemsRead: items.length,
      extra: [],
    };
    for (const item of items) {
      if (!live(item, now)) continue;
      if (!file(out.facts, out.runners, item)) out.extra.push(item);
    }
    return out;
  }

  private async queryItems(
    where: { pk: string; skBelow?: string } | { index: keyof typeof INDEX_ATTRIBUTE; key: string },
    limit?: number,
  ): Promise<Item[]> {
    const out: Item[] = [];
    let startKey: Item | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            ...('index' in where
              ? {
                  IndexName: where.index,
                  KeyConditionExpression: '#k = :k',
                  ExpressionAttributeNames: { '#k': INDEX_ATTRIBUTE[where.index] },
                  ExpressionAttributeValues: { ':k': where.key },
                }
              : where.skBelow !== undefined
                ? {
                    KeyConditionExpression: 'pk = :k AND sk <= :below',
                    ExpressionAttributeValues: { ':k': where.pk, ':below': where.skBelow },
                  }
                : {
                    KeyConditionExpression: 'pk = :k',
                    ExpressionAttributeValues: { ':k': where.pk },
                  }),
            ...(limit !== undefined ? { Limit: limit - out.length } : {}),
            ExclusiveStartKey: startKey,
          }),
        );
      } catch (error) {
        throw new StoreError(`could not read ${'pk' in where ? where.pk : where.key}`, {
          cause: error,
        });
      }
      out.push(...((page.Items ?? []) as Item[]));
      startKey = page.LastEvaluatedKey as Item | undefined;
    } while (startKey && (limit === undefined || out.length < limit));
    return out;
  }

  private async send(
    what: string,
    command: PutCommand | UpdateCommand | DeleteCommand,
    conditionFailureIsFine = false,
  ): Promise<void> {
    try {
      await this.client.send(command as PutCommand);
    } catch (error) {
      if (conditionFailureIsFine && error instanceof ConditionalCheckFailedException) return;
      throw new StoreError(`could not ${what}`, { cause: error });
    }
  }
}

const DAY_MS = DAY * 1000;
/** The trail's index key for the UTC day of `at`. */
const auditDay = (at: number) => `AUDIT#${new Date(at).toISOString().slice(0, 10)}`;

/** A timer's sort key: by time, then ordered timers by place (digits sort before subjects). */

const INDEX_ATTRIBUTE = {
  byRunnerName: 'rn',
  byRun: 'run',
  byGroup: 'grp',
  byPending: 'pend',
} as const;

/** The index keys an action is filed under: its runner's name, its run, or its job. */
function actionIndexes(action: Action): Item {
  const t = action.target;
  const out: Item = {};
  const runner = action.scope.runnerName;
  if (runner) out.rn = nameKey(runner);
  if ('repo' in t && 'runId' in t) out.run = runKey(t.repo, t.runId);
  else if (t.kind === 'report-starvation') out.run = jobPk(t.repo, t.jobId);
  return out;
}

/** One breaker pass as a conditional update, or why the item as read holds the call. */
type PassPlan =
  | { why: string; until: number }
  | {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    };

/**
 * How to pass a breaker, from its item as read: the call's own loss, fresh and not yet counted,
 * is counted in the same write, which passes only while the live losses stay under the limit.
 * The condition is the read state the write relies on: the breaker closed; each entry it prunes
 * (past the window) still there, so that `size(losses) < cap` counts the live ones exactly; the
 * call's own entry as it was. A write whose condition fails lost a race and is planned again.
 */
function passPlan(
  item: Item | null,
  gate: BreakerGate,
  loss: Pick<CountedLoss, 'runner' | 'at'> | null,
  now: number,
): PassPlan {
  const where = `${gate.cluster}${gate.scaleSet ? `/${gate.scaleSet}` : ''}`;
  const openUntil = typeof item?.openUntil === 'number' ? item.openUntil : null;
  if (openUntil !== null && openUntil > now)
    return { why: `circuit breaker open on ${where} until ${iso(openUntil)}`, until: openUntil };
  const cutoff = now - gate.windowMs;
  const entries = (item?.losses ?? null) as Record<string, number> | null;
  const mine = loss ? entries?.[loss.runner] : undefined;
  const adds = loss !== null && loss.at > cutoff && !(mine !== undefined && mine > cutoff);
  const counted = Object.values(entries ?? {}).filter((t) => t > cutoff);
  const times = [...counted, ...(adds ? [loss.at] : [])].sort((a, b) => a - b);
  const until = times[times.length - gate.limit];
  if (until !== undefined)
    return {
      why: `circuit breaker open: ${times.length} losses in ${gate.windowMs / 1000} s on ${where} (threshold ${gate.limit})`,
      until: until + gate.windowMs,
    };

  const names: Record<string, string> = {
    '#l': 'losses',
    '#cluster': 'cluster',
    '#set': 'scaleSet',
  };
  const values: Record<string, unknown> = {
    ':now': now,
    ':cluster': gate.cluster,
    ':scaleSet': gate.scaleSet,
    ':none': [],
  };
  const when = ['(attribute_not_exists(openUntil) OR openUntil <= :now)'];
  const set = [
    'expiresAt = :exp',
    '#cluster = if_not_exists(#cluster, :cluster)',
    '#set = if_not_exists(#set, :scaleSet)',
    'held = if_not_exists(held, :none)',
  ];
  const remove: string[] = [];
  if (entries === null) {
    when.push('attribute_not_exists(#l)');
    set.push('#l = :first');
    values[':first'] = adds ? { [loss.runner]: loss.at } : {};
  } else {
    const stale = Object.entries(entries)
      .filter(([k, t]) => t <= cutoff && !(adds && k === loss.runner))
      .map(([k]) => k)
      .slice(0, PRUNE_PER_WRITE);
    stale.forEach((k, i) => {
      names[`#p${i}`] = k;
      when.push(`attribute_exists(#l.#p${i})`);
      remove.push(`#l.#p${i}`);
    });
    // live after the write = size − pruned − (own stale entry) + (own loss added) < limit
    values[':cap'] =
      gate.limit + stale.length + (adds && mine !== undefined ? 1 : 0) - (adds ? 1 : 0);
    when.push('size(#l) < :cap');
    if (adds) {
      names['#s'] = loss.runner;
      when.push(mine === undefined ? 'attribute_not_exists(#l.#s)' : '#l.#s = :old');
      if (mine !== undefined) values[':old'] = mine;
      set.push('#l.#s = :at');
      values[':at'] = loss.at;
    }
  }
  return {
    UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: when.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

const live = (item: Item, now: number) =>
  !(typeof item.expiresAt === 'number' && item.expiresAt < seconds(now));

/** Files one item into a facts slice by its type; false when it is not a fact. */
function file(facts: StoredFacts, runners: RunnerRef[], item: Item): boolean {
  if (fileFact(facts, runners, String(item.type), item.data)) return true;
  if (!String(item.pk).startsWith('BREAKER#')) return false;
  facts.breakers.push(breakerOf(item));
  return true;
}

function breakerOf(item: Item): Fact.BreakerState {
  return {
    cluster: String(item.cluster),
    scaleSet: typeof item.scaleSet === 'string' ? item.scaleSet : null,
    losses: (item.losses as Record<string, number> | undefined) ?? {},
    trippedAt: typeof item.trippedAt === 'number' ? item.trippedAt : null,
    openUntil: typeof item.openUntil === 'number' ? item.openUntil : null,
    held: (item.held as string[] | undefined) ?? [],
  };
}

const seconds = (ms: number) => Math.floor(ms / 1000);
