import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { DETAIL_TYPES } from '../../domain/observation.js';
import type { GithubObservation } from '../../domain/observation.js';
import { parseClusterInput } from '../../domain/parse-cluster-input.js';
import type { KubeEventParseOptions } from '../../domain/parse-kube-event.js';
import type { Trigger } from '../../engine/trigger.js';

export const WAKE_SOURCE = 'runner-medic.wake';

export type RemediateInput = { ok: true; trigger: Trigger } | { ok: false; reason: string };

const OBSERVATION_DETAIL_TYPES = new Set(Object.values(DETAIL_TYPES));

const repository = z.object({
  id: z.number(),
  fullName: z.string().min(3),
  owner: z.string().min(1),
  name: z.string().min(1),
});
const base = {
  deliveryId: z.string().min(1),
  installationId: z.number().nullable(),
  repository,
  receivedAt: z.string(),
};
const nullableString = z.string().nullable();
const jobFacts = z.object({
  jobId: z.number(),
  runId: z.number(),
  runAttempt: z.number().int().positive(),
  name: z.string(),
  workflowName: nullableString,
  headBranch: nullableString,
  labels: z.array(z.string()),
  status: z.string(),
  conclusion: nullableString,
  runnerId: z.number().nullable(),
  runnerName: nullableString,
  runnerGroupId: z.number().nullable(),
  runnerGroupName: nullableString,
  htmlUrl: z.string(),
  createdAt: nullableString,
  startedAt: nullableString,
  completedAt: nullableString,
});
const runFacts = z.object({
  runId: z.number(),
  runAttempt: z.number().int().positive(),
  name: nullableString,
  status: z.string(),
  conclusion: nullableString,
  event: nullableString,
  htmlUrl: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  runStartedAt: nullableString,
});
const observationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('job.queued'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.waiting'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.started'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('job.completed'), ...base, job: jobFacts }),
  z.object({ kind: z.literal('run.completed'), ...base, run: runFacts }),
]);

const envelopeSchema = z.object({
  source: z.string(),
  'detail-type': z.string(),
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
        reason: `bad observation: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
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
  for (const record of records) {
    if (!isObject(record) || record.eventSource !== 'aws:sqs' || typeof record.body !== 'string') {
      return { ok: false, reason: 'not an SQS record' };
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
