import * as z from 'zod';
import type { KubeEvent } from '../model/cluster-facts.js';
import { problemText } from '../model/zod-problems.js';
import { parseKubeEventObject, type KubeEventParseOptions } from './parse-kube-event.js';
import { fail, ok, type Result } from '../model/result.js';

/** CloudWatch Logs caps a subscription batch at 10,000 events and an event at 256 KiB. */
const MAX_LOG_EVENTS = 10_000;
const MAX_MESSAGE_CHARS = 256 * 1024;

/**
 * The decoded (gunzipped, JSON-parsed) `awslogs.data` of a CloudWatch Logs subscription. Built
 * on first parse (z.lazy), as is the record's: only remediate's log inputs need them.
 */
const logsDataSchema = z.lazy(() =>
  z.object({
    messageType: z.string().max(64),
    logGroup: z.string().max(512).nullish(),
    logStream: z.string().max(512).nullish(),
    // Each record is checked on its own below, so one bad record rejects only itself.
    logEvents: z.array(z.unknown()).max(MAX_LOG_EVENTS),
  }),
);

const logEventSchema = z.lazy(() =>
  z.object({
    id: z.string().max(128).nullish(),
    message: z.string().max(MAX_MESSAGE_CHARS),
    timestamp: z.number().int().nonnegative().max(8.64e15).nullish(),
  }),
);

export interface CloudWatchKubeEvents {
  messageType: string;
  logGroup: string | null;
  events: KubeEvent[];
  /** Log events that were not Kubernetes Events, with the reason; never thrown. */
  rejected: { id: string | null; reason: string }[];
}

function unwrap(record: unknown): unknown {
  // Fluent Bit may nest the Event under a `log` key, as an object or a JSON string.
  if (record && typeof record === 'object' && 'log' in record && !('involvedObject' in record)) {
    const log = (record as { log: unknown }).log;
    if (typeof log === 'string') return tryJson(log);
    return log;
  }
  return record;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Kubernetes Events shipped by Fluent Bit's `kubernetes_events` input to CloudWatch Logs,
 * received through a subscription filter. The adapter decodes base64 + gzip; this parses the rest.
 * `CONTROL_MESSAGE` payloads yield no events.
 */
export function parseCloudWatchKubeEvents(
  decoded: unknown,
  options: KubeEventParseOptions = {},
): Result<CloudWatchKubeEvents> {
  const r = logsDataSchema.safeParse(decoded);
  if (!r.success) return fail(`not CloudWatch Logs data: ${problemText(r.error)}`);
  const out: CloudWatchKubeEvents = {
    messageType: r.data.messageType,
    logGroup: r.data.logGroup ?? null,
    events: [],
    rejected: [],
  };
  if (r.data.messageType !== 'DATA_MESSAGE') return ok(out);
  for (const record of r.data.logEvents) {
    const parsed = logEventSchema.safeParse(record);
    if (!parsed.success) {
      out.rejected.push({
        id: idOf(record),
        reason: `bad log event: ${problemText(parsed.error)}`,
      });
      continue;
    }
    const le = parsed.data;
    const json = tryJson(le.message);
    if (json === undefined) {
      out.rejected.push({ id: le.id ?? null, reason: 'message is not JSON' });
      continue;
    }
    const ev = parseKubeEventObject(unwrap(json), {
      ...options,
      recordedAt: options.recordedAt ?? le.timestamp ?? null,
    });
    if (ev.ok) out.events.push(ev.value);
    else out.rejected.push({ id: le.id ?? null, reason: ev.reason });
  }
  return ok(out);
}

function idOf(record: unknown): string | null {
  if (typeof record !== 'object' || record === null || !('id' in record)) return null;
  return typeof record.id === 'string' ? record.id.slice(0, 128) : null;
}
