import { createHash } from 'node:crypto';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { JobRecord } from '../../domain/model/facts.js';
import { ms } from '../../domain/model/time.js';
import type { DueWake } from '../../ports/facts-store.js';

/**
 * The single DynamoDB table. Every item has `pk` and `sk`; `expiresAt` (epoch seconds) is the
 * TTL attribute, and code also checks it on read because DynamoDB deletes expired items lazily.
 * serverless.yml declares the same table for AWS; keep the two in step.
 */
const TABLE_KEYS = { partition: 'pk', sort: 'sk', ttl: 'expiresAt' } as const;

const DELIVERY_PK = 'DELIVERY#';
export const deliveryKey = (deliveryId: string) => ({
  pk: `${DELIVERY_PK}${deliveryId}`,
  sk: 'DELIVERY',
});
/** The delivery id of a delivery item's `pk`; null for any other item. */
export const deliveryIdOf = (pk: string): string | null =>
  pk.startsWith(DELIVERY_PK) ? pk.slice(DELIVERY_PK.length) : null;

/**
 * The `byGroup` key of every node signal of one cluster, so the sweep reads a cluster's signals
 * in one query rather than each node's partition (which also holds the runners on the node).
 */
export const clusterSignalsKey = (cluster: string) => `SIGNALS#${cluster}`;

const MINUTE_MS = 60_000;

/** The `byGroup` key of an owner's jobs waiting for a runner. */
export const queuedJobsKey = (owner: string) => `QUEUED#${owner}`;

/** The `byGroup` key of the jobs with a runner that finished (were recorded finished) in a minute. */
const finishedJobsKey = (minute: number) => `FINISHED#${timeKey(minute * MINUTE_MS)}`;

/**
 * A job record's `byGroup` key: its owner's queued jobs while it waits for a runner (the sweep's
 * starvation check), and the minute it finished in once it ran on one (the sweep's look for
 * runners that outlive their job). The minute is the later of its end and its recording, so a
 * late webhook still falls in a minute the sweep has yet to look at.
 */
export function jobGroupKey(record: JobRecord, now: number): string | null {
  const { status, runnerName, completedAt } = record.job;
  if (status === 'queued' && runnerName === null) return queuedJobsKey(record.repository.owner);
  if (status !== 'completed' || runnerName === null) return null;
  const ended = Math.max(ms(completedAt) ?? now, now);
  return finishedJobsKey(Math.floor(ended / MINUTE_MS));
}

/** The `byGroup` keys of the minutes from `from` to `to` (epoch ms, both included). */
export function finishedJobsKeys(from: number, to: number): string[] {
  const keys: string[] = [];
  for (let m = Math.floor(from / MINUTE_MS); m <= Math.floor(to / MINUTE_MS); m++)
    keys.push(finishedJobsKey(m));
  return keys;
}

/** Epoch ms as a fixed-width sort key, so that keys sort by time. */
export const timeKey = (at: number) => String(Math.max(0, Math.floor(at))).padStart(15, '0');

/**
 * A timer's sort key in the `WAKES` partition: its time, then its place when it is ordered work
 * (`p#`, before the unordered `s#` of the same moment), then a digest of its subjects, so the
 * same timer set twice is the same item.
 */
export function wakeKey(at: number, subjects: readonly string[], position?: number): string {
  const digest = createHash('sha256').update(subjects.join('\n')).digest('hex').slice(0, 24);
  return position === undefined
    ? `${timeKey(at)}#s#${digest}`
    : `${timeKey(at)}#p#${String(position).padStart(8, '0')}#${digest}`;
}

/** A stored timer as the engine reads it (one stored before timers held their subjects together: one subject). */
export function wakeOf(sortKey: string, data: unknown): DueWake {
  const d = data as { at: number; subjects?: string[]; subject?: string; position?: number };
  const subjects = d.subjects ?? (d.subject === undefined ? [] : [d.subject]);
  return {
    at: d.at,
    subjects,
    ...(d.position === undefined ? {} : { position: d.position }),
    key: sortKey,
  };
}

/**
 * The global secondary indexes the engine's joins use (all project every attribute; all sparse:
 * an item is in an index only when it carries that index's key):
 * - `byRunnerName` (`rn`, `sk`): a job by the runner it ran on; a runner's losses, warnings, cached
 *   job fields, registration and the actions on it; a webhook delivery by its id (`DELIVERY#…`).
 * - `byRun` (`run`, `sk`): a run's jobs, its run records and its re-run / cancel intents.
 * - `byGroup` (`grp`, `sk`): an owner's queued jobs (`QUEUED#…`), jobs that finished on a runner
 *   by minute (`FINISHED#…`), an owner's registrations
 *   (`REGS#…`), the owners with jobs (`OWNERS`), a cluster's node signals (`SIGNALS#…`).
 * - `byPending` (`pend`, `sk`): claims without a result (`CLAIM`), audit events not yet
 *   published (`OUTBOX`) and webhook deliveries claimed but not yet published (`DELIVERY-PENDING`).
 */
const TABLE_INDEXES = {
  byRunnerName: 'rn',
  byRun: 'run',
  byGroup: 'grp',
  byPending: 'pend',
} as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sort, AttributeType: 'S' },
      ...Object.values(TABLE_INDEXES).map((a) => ({
        AttributeName: a,
        AttributeType: 'S' as const,
      })),
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: Object.entries(TABLE_INDEXES).map(([name, attribute]) => ({
      IndexName: name,
      KeySchema: [
        { AttributeName: attribute, KeyType: 'HASH' as const },
        { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
