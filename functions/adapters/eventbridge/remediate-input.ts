import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { MAX_DELIVERY_ID_LENGTH, githubId } from '../../domain/model/github-objects.js';
import { DETAIL_TYPES } from '../../domain/model/observation.js';
import type { GithubObservation } from '../../domain/model/observation.js';
import { parseClusterInput } from '../../domain/parse/parse-cluster-input.js';
import type { KubeEventParseOptions } from '../../domain/parse/parse-kube-event.js';
import type { Trigger } from '../../ports/trigger.js';

export const WAKE_SOURCE = 'runner-medic.wake';

export type RemediateInput = { ok: true; trigger: Trigger } | { ok: false; reason: string };

const OBSERVATION_DETAIL_TYPES = new Set(Object.values(DETAIL_TYPES));

/**
 * Bounds every field: GitHub's own limits (a login is at most 39 characters, a repository name
 * 100, ids stay below 2^53, a run has far fewer than 1,000 attempts) with headroom. Anything
 * outside is rejected with a reason here, never thrown later by the store or a key builder.
 */
const id = githubId;
const text = (max: number) => z.string().max(max);
const MAX_TEXT = 1024;
const MAX_URL = 2048;
const MAX_ATTEMPT = 1000;
const MAX_SQS_RECORDS = 10;
const MAX_SQS_BODY = 256 * 1024;
const repository = z.object({
  id,
  fullName: z.string().min(3).max(140),
  owner: z.string().min(1).max(39),
  name: z.string().min(1).max(100),
});
const base = {
  deliveryId: z.string().min(1).max(MAX_DELIVERY_ID_LENGTH),
  installationId: id.nullable(),
  repository,
  receivedAt: text(64),
};
const nullableString = text(MAX_TEXT).nullable();
const attempt = z.number().int().positive().max(MAX_ATTEMPT);
const jobFacts = z.object({
  jobId: id,
  runId: id,
  runAttempt: attempt,
  name: text(MAX_TEXT),
  workflowName: nullableString,
  headBranch: nullableString,
  labels: z.array(text(256)).max(100),
  status: text(64),
  conclusion: text(64).nullable(),
  runnerId: id.nullable(),
  runnerName: nullableString,
  runnerGroupId: id.nullable(),
  runnerGroupName: nullableString,
  htmlUrl: text(MAX_URL),
  createdAt: text(64).nullable(),
  startedAt: text(64).nullable(),
  completedAt: text(64).nullable(),
});
const runFacts = z.object({
  runId: id,
  runAttempt: attempt,
  name: nullableString,
  status: text(64),
  conclusion: text(64).nullable(),
  event: text(64).nullable(),
  htmlUrl: text(MAX_URL),
  createdAt: text(64),
  updatedAt: text(64),
  runStartedAt: text(64).nullable(),
});
const observationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('job.queued'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.waiting'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.started'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.completed'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('run.completed'), ...base, run: runFacts }),
]);

const envelopeSchema = z.object({
  source: z.string().max(256),
  'detail-type': z.string().max(128),
  detail: z.unknown(),
});

/**
 * What reached the remediate function: an observation of ours, a Kubernetes event (exported to
 * EventBridge, or a CloudWatch Logs subscription batch), an EC2 event, or a scheduled wake-up.
 */
export function parseRemediateInput(
  raw: unknown,
  options: KubeEventParseOptions = {},
): RemediateInput {
  if (isObject(raw) && isObject(raw.awslogs)) return fromCloudWatchLogs(raw.awslogs, options);
  if (isObject(raw) && Array.isArray(raw.Records)) return fromWakeQueue(raw.Records);
  const envelope = envelopeSchema.safeParse(raw);
  if (!envelope.success)
    return { ok: false, reason: 'not an EventBridge event or CloudWatch Logs batch' };
  const { source } = envelope.data;
  const detailType = envelope.data['detail-type'];
  if (source === WAKE_SOURCE) return { ok: true, trigger: { kind: 'wake' } };
  if (source === 'runner-medic') {
    if (!OBSERVATION_DETAIL_TYPES.has(detailType)) {
      return { ok: false, reason: `runner-medic ${detailType} events are not inputs` };
    }
    const parsed = observationSchema.safeParse(envelope.data.detail);
    if (!parsed.success) {
      return {
        ok: false,
        reason: `bad observation: ${parsed.error.issues.map((i) => `${i.path.join('.')} (${i.message})`).join(', ')}`,
      };
    }
    return {
      ok: true,
      trigger: { kind: 'observation', observation: parsed.data as GithubObservation },
    };
  }
  const cluster = parseClusterInput(raw, options);
  return cluster.ok
    ? { ok: true, trigger: { kind: 'cluster', input: cluster.value } }
    : { ok: false, reason: cluster.reason };
}

/** Delayed SQS messages (SqsWakeScheduler): each is a wake-up; anything else is refused. */
function fromWakeQueue(records: unknown[]): RemediateInput {
  if (records.length > MAX_SQS_RECORDS) {
    return { ok: false, reason: `more than ${MAX_SQS_RECORDS} SQS records` };
  }
  for (const record of records) {
    if (!isObject(record) || record.eventSource !== 'aws:sqs' || typeof record.body !== 'string') {
      return { ok: false, reason: 'not an SQS record' };
    }
    if (record.body.length > MAX_SQS_BODY) {
      return { ok: false, reason: `SQS message body over ${MAX_SQS_BODY} characters` };
    }
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      return { ok: false, reason: 'SQS message body is not JSON' };
    }
    if (!isObject(body) || body.source !== WAKE_SOURCE) {
      return { ok: false, reason: 'SQS message is not a runner-medic wake-up' };
    }
  }
  return records.length > 0
    ? { ok: true, trigger: { kind: 'wake' } }
    : { ok: false, reason: 'no SQS records' };
}

function fromCloudWatchLogs(
  awslogs: Record<string, unknown>,
  options: KubeEventParseOptions,
): RemediateInput {
  if (typeof awslogs.data !== 'string') return { ok: false, reason: 'awslogs.data is missing' };
  let decoded: unknown;
  try {
    decoded = JSON.parse(gunzipSync(Buffer.from(awslogs.data, 'base64')).toString('utf8'));
  } catch {
    return { ok: false, reason: 'awslogs.data is not base64 gzip JSON' };
  }
  const cluster = parseClusterInput(decoded, options);
  return cluster.ok
    ? { ok: true, trigger: { kind: 'cluster', input: cluster.value } }
    : { ok: false, reason: cluster.reason };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
