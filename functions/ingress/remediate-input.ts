import { gunzipSync } from 'node:zlib';
import type { EventBridgeEvent, SqsRecord } from '@aws-lambda-powertools/parser/types';
import * as z from 'zod';
import {
  DETAIL_TYPES,
  OBSERVATION_SOURCE,
  githubObservationSchema,
} from '../domain/model/observation.js';
import { problemLines } from '../domain/model/zod-problems.js';
import { parseClusterInput } from '../domain/parse/parse-cluster-input.js';
import type { KubeEventParseOptions } from '../domain/parse/parse-kube-event.js';
import type { Trigger } from '../ports/trigger.js';
import { WAKE_SOURCE } from '../ports/wake-scheduler.js';

export type RemediateInput = { ok: true; trigger: Trigger } | { ok: false; reason: string };

const OBSERVATION_DETAIL_TYPES = new Set(Object.values(DETAIL_TYPES));
const MAX_SQS_RECORDS = 10;
const MAX_SQS_BODY = 256 * 1024;

/*
 * The envelopes are AWS's events narrowed to the fields runner-medic reads, and bounded: the rest
 * of AWS's envelope is not required (the twins, the tests and `serverless invoke local` send
 * trimmed events), and what is inside is the domain's to parse. They are written here rather than
 * picked from Powertools parser's schemas, which import zod's named `z` (all of zod, 444 KB in the
 * bundle, about a fifth of remediate's start-up); `satisfies` holds each field to Powertools' type
 * of the AWS event.
 */

/** Powertools parser's JSONStringified, on the namespace import: a JSON string, then `schema`. */
const jsonStringified = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `Invalid JSON - ${(error as Error).message}` });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** Powertools parser's Base64Encoded: base64 of gzip JSON, of JSON, or of text, then `schema`. */
const base64Encoded = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((data) => {
      const bytes = Buffer.from(data, 'base64');
      try {
        return JSON.parse(gunzipSync(bytes).toString('utf8')) as unknown;
      } catch {
        const decoded = bytes.toString('utf8');
        try {
          return JSON.parse(decoded) as unknown;
        } catch {
          return decoded;
        }
      }
    })
    .pipe(schema);

const eventBridgeEvent = z.object({
  source: z.string().max(256),
  'detail-type': z.string().max(128),
  detail: z.unknown(),
}) satisfies z.ZodType<Pick<EventBridgeEvent, 'source' | 'detail-type' | 'detail'>>;

const wakeUpRecord = z.object({
  eventSource: z.literal('aws:sqs'),
  body: z
    .string()
    .max(MAX_SQS_BODY, `SQS message body over ${MAX_SQS_BODY} characters`)
    .pipe(jsonStringified(z.object({ source: z.literal(WAKE_SOURCE) }))),
}) satisfies z.ZodType<Pick<SqsRecord, 'eventSource'>>;

/** Delayed SQS messages (SqsWakeScheduler): counted first, then each must be a wake-up. */
const wakeQueueBatch = z.object({
  Records: z
    .array(z.unknown())
    .min(1, 'no SQS records')
    .max(MAX_SQS_RECORDS, `more than ${MAX_SQS_RECORDS} SQS records`)
    .pipe(z.array(wakeUpRecord)),
});

/** gzip's magic number (1f 8b 08) in base64: CloudWatch Logs always compresses. */
const GZIP_IN_BASE64 = 'H4sI';

/** A CloudWatch Logs subscription batch: `awslogs.data` is base64 gzip JSON. */
const cloudWatchLogsBatch = z.object({
  awslogs: z.object({
    data: z
      .base64({ error: 'not base64 gzip JSON' })
      .refine((data) => data.startsWith(GZIP_IN_BASE64), 'not base64 gzip JSON')
      .pipe(base64Encoded(z.looseObject({}, { error: 'not a JSON object' }))),
  }),
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/**
 * What reached the remediate function: an observation of ours, a Kubernetes event (exported to
 * EventBridge, or a CloudWatch Logs subscription batch), an EC2 event, or a scheduled wake-up.
 * Anything else is refused with a reason; nothing here throws.
 */
export function parseRemediateInput(
  raw: unknown,
  options: KubeEventParseOptions = {},
): RemediateInput {
  if (isObject(raw) && isObject(raw.awslogs)) {
    const batch = cloudWatchLogsBatch.safeParse(raw);
    if (!batch.success) return refused('bad CloudWatch Logs batch', batch.error);
    return fromCluster(batch.data.awslogs.data, options);
  }
  if (isObject(raw) && Array.isArray(raw.Records)) {
    const batch = wakeQueueBatch.safeParse(raw);
    return batch.success
      ? { ok: true, trigger: { kind: 'wake' } }
      : refused('bad wake-up batch', batch.error);
  }
  const event = eventBridgeEvent.safeParse(raw);
  if (!event.success)
    return { ok: false, reason: 'not an EventBridge event or CloudWatch Logs batch' };
  const { source, detail } = event.data;
  const detailType = event.data['detail-type'];
  if (source === WAKE_SOURCE) return { ok: true, trigger: { kind: 'wake' } };
  if (source !== OBSERVATION_SOURCE) return fromCluster(raw, options);
  if (!OBSERVATION_DETAIL_TYPES.has(detailType))
    return { ok: false, reason: `runner-medic ${detailType} events are not inputs` };
  const observation = githubObservationSchema.safeParse(detail);
  return observation.success
    ? { ok: true, trigger: { kind: 'observation', observation: observation.data } }
    : refused('bad observation', observation.error);
}

/** The cluster side is the domain's to read: an exported Kubernetes event, EC2, or log events. */
function fromCluster(input: unknown, options: KubeEventParseOptions): RemediateInput {
  const cluster = parseClusterInput(input, options);
  return cluster.ok
    ? { ok: true, trigger: { kind: 'cluster', input: cluster.value } }
    : { ok: false, reason: cluster.reason };
}

/** A refusal naming every problem by its key path, each once. */
const refused = (what: string, error: z.ZodError): RemediateInput => ({
  ok: false,
  reason: `${what}: ${[...new Set(problemLines(error))].join('; ')}`,
});
