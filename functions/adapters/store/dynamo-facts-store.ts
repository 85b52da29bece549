import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Action, ActionOutcome, ActionTarget } from '../../domain/action.js';
import type { JobAnnotation } from '../../domain/annotations.js';
import type {
  ActionRecord,
  ErJobCacheEntry,
  JobRecord,
  MissingPod,
  RunRecord,
  RunnerRegistration,
} from '../../domain/facts.js';
import type { Loss, NodeSignal, RunnerWarning } from '../../domain/loss.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import type { ClaimResult, FactsStore, StaleClaim, StoredFacts } from '../../ports/facts-store.js';

const DAY = 24 * 3600;
/** How long each kind of fact is kept (seconds). Actions outlive GitHub's 30-day re-run window. */
const TTL = {
  job: 3 * DAY,
  run: 3 * DAY,
  loss: DAY,
  nodeSignal: DAY,
  runnerWarning: DAY,
  erJob: 2 * DAY,
  missingPod: DAY,
  registrations: DAY,
  action: 35 * DAY,
  wake: 2 * DAY,
} as const;

type FactKind = keyof typeof TTL;

const JOB_STAGE: Record<string, number> = { queued: 0, waiting: 1, in_progress: 2, completed: 3 };
const RETRYABLE: ActionOutcome[] = ['retry-later', 'failed'];

/** The remediation facts on the single table: `pk = FACT#<kind>`, `sk = <id>`, `data`, `expiresAt`. */
export class DynamoFactsStore implements FactsStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async load(now: number): Promise<StoredFacts> {
    const [
      jobs,
      runs,
      erJobCache,
      missingPods,
      losses,
      nodeSignals,
      runnerWarnings,
      regs,
      actions,
      wake,
    ] = await Promise.all([
      this.list<JobRecord>('job', now),
      this.list<RunRecord>('run', now),
      this.list<ErJobCacheEntry>('erJob', now),
      this.list<MissingPod>('missingPod', now),
      this.list<Loss>('loss', now),
      this.list<NodeSignal>('nodeSignal', now),
      this.list<RunnerWarning>('runnerWarning', now),
      this.list<RunnerRegistration[]>('registrations', now),
      this.list<ActionRecord>('action', now),
      this.list<{ at: number }>('wake', now),
    ]);
    return {
      jobs,
      runs,
      erJobCache,
      missingPods,
      losses,
      nodeSignals,
      runnerWarnings,
      registrations: regs.flat(),
      actions,
      wakeAt: wake[0] && wake[0].at > now ? wake[0].at : null,
    };
  }

  async recordJob(record: JobRecord, now: number): Promise<void> {
    const rank = record.job.runAttempt * 10 + (JOB_STAGE[record.job.status] ?? 0);
    const id = `${record.repository.fullName}#${record.job.jobId}`;
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.item('job', id, record, now, { rank }),
          ConditionExpression: 'attribute_not_exists(pk) OR #rank <= :rank OR expiresAt < :now',
          ExpressionAttributeNames: { '#rank': 'rank' },
          ExpressionAttributeValues: { ':rank': rank, ':now': seconds(now) },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw new StoreError(`could not record job ${id}`, { cause: error });
    }
  }

  async recordRun(record: RunRecord, now: number): Promise<void> {
    await this.put('run', `${record.repository.fullName}#${record.run.runId}`, record, now);
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
        Key: { pk: 'FACT#job', sk: `${repo}#${jobId}` },
        UpdateExpression: 'SET #data.annotations = :annotations',
        ConditionExpression: 'attribute_exists(pk) AND expiresAt >= :now',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: { ':annotations': annotations, ':now': seconds(now) },
      }),
      true,
    );
  }

  async recordLoss(loss: Loss, now: number): Promise<void> {
    const id = [
      loss.cluster,
      loss.namespace,
      loss.runnerName,
      loss.cause.kind,
      loss.podUid ?? '',
    ].join('#');
    await this.put('loss', id, loss, now);
  }

  async recordNodeSignal(signal: NodeSignal, now: number): Promise<void> {
    const id = [
      signal.cluster ?? '',
      signal.nodeName ?? '',
      signal.instanceId ?? '',
      signal.kind,
    ].join('#');
    await this.put('nodeSignal', id, signal, now);
  }

  async recordRunnerWarning(warning: RunnerWarning, now: number): Promise<void> {
    const id = [warning.cluster, warning.namespace, warning.runnerName, warning.kind].join('#');
    await this.put('runnerWarning', id, warning, now);
  }

  async cacheErJob(entry: ErJobCacheEntry, now: number): Promise<void> {
    const id = [entry.cluster, entry.namespace, entry.runnerName].join('/');
    await this.putIfAbsent('erJob', id, entry, now);
  }

  async recordMissingPod(pod: MissingPod, now: number): Promise<void> {
    await this.putIfAbsent(
      'missingPod',
      [pod.cluster, pod.namespace, pod.name].join('/'),
      pod,
      now,
    );
  }

  async clearMissingPod(cluster: string, namespace: string, name: string): Promise<void> {
    await this.send(
      `clear missing pod ${name}`,
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: 'FACT#missingPod', sk: [cluster, namespace, name].join('/') },
      }),
    );
  }

  async replaceRegistrations(registrations: RunnerRegistration[], now: number): Promise<void> {
    await this.put('registrations', 'ALL', registrations, now);
  }

  async claimAction(action: Action, now: number, staleAfterMs: number): Promise<ClaimResult> {
    const record: ActionRecord = {
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
            ...this.item('action', action.key, record, now),
            outcome: 'claimed',
            claimedAt: now,
            target: action.target,
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
        previous: (result.Attributes?.data as ActionRecord | undefined) ?? null,
      };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        return { claimed: false, existing: await this.getAction(action.key, now) };
      }
      throw new StoreError(`could not claim action ${action.key}`, { cause: error });
    }
  }

  async finishAction(
    key: string,
    outcome: ActionOutcome,
    now: number,
    detail: string,
  ): Promise<void> {
    await this.send(
      `finish action ${key}`,
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: 'FACT#action', sk: key },
        UpdateExpression:
          'SET outcome = :outcome, #data.outcome = :outcome, #data.finishedAt = :now, #data.detail = :detail',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: { ':outcome': outcome, ':now': now, ':detail': detail },
      }),
    );
  }

  async staleClaims(now: number, staleAfterMs: number): Promise<StaleClaim[]> {
    const items = await this.listItems('action', now);
    return items
      .filter((item) => item.outcome === 'claimed' && Number(item.claimedAt) < now - staleAfterMs)
      .map((item) => ({
        key: String(item.sk),
        target: item.target as ActionTarget,
        claimedAt: Number(item.claimedAt),
      }));
  }

  async scheduleWake(at: number, now: number): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.item('wake', 'NEXT', { at }, now),
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

  private async getAction(key: string, now: number): Promise<ActionRecord> {
    const actions = await this.list<ActionRecord>('action', now, key);
    const found = actions[0];
    if (!found) throw new StoreError(`action ${key} vanished between claim and read`);
    return found;
  }

  private item(kind: FactKind, id: string, data: unknown, now: number, extra: object = {}) {
    return { pk: `FACT#${kind}`, sk: id, data, expiresAt: seconds(now) + TTL[kind], ...extra };
  }

  private async put(kind: FactKind, id: string, data: unknown, now: number): Promise<void> {
    await this.send(
      `record ${kind} ${id}`,
      new PutCommand({ TableName: this.tableName, Item: this.item(kind, id, data, now) }),
    );
  }

  private async putIfAbsent(kind: FactKind, id: string, data: unknown, now: number): Promise<void> {
    await this.send(
      `record ${kind} ${id}`,
      new PutCommand({
        TableName: this.tableName,
        Item: this.item(kind, id, data, now),
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
        ExpressionAttributeValues: { ':now': seconds(now) },
      }),
      true,
    );
  }

  private async list<T>(kind: FactKind, now: number, onlyId?: string): Promise<T[]> {
    return (await this.listItems(kind, now, onlyId)).map((item) => item.data as T);
  }

  private async listItems(
    kind: FactKind,
    now: number,
    onlyId?: string,
  ): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: onlyId ? 'pk = :pk AND sk = :sk' : 'pk = :pk',
            ExpressionAttributeValues: {
              ':pk': `FACT#${kind}`,
              ...(onlyId ? { ':sk': onlyId } : {}),
            },
            ExclusiveStartKey: startKey,
          }),
        );
      } catch (error) {
        throw new StoreError(`could not list ${kind}`, { cause: error });
      }
      for (const item of page.Items ?? []) {
        if (typeof item.expiresAt === 'number' && item.expiresAt < seconds(now)) continue;
        out.push(item);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
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

const seconds = (ms: number) => Math.floor(ms / 1000);
