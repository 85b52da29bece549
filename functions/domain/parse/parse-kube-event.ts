import * as z from 'zod';
import type { KubeEvent } from '../model/cluster-facts.js';
import {
  LIMITS,
  boundedText,
  kubeName,
  kubeNamespace,
  kubeUid,
  labels,
  ownerReferences,
  timestamp,
} from '../model/kube-schemas.js';
import { fail, ok, type Result } from '../model/result.js';
import { problemText } from '../model/zod-problems.js';

/**
 * A core/v1 Event, optionally enriched by kubernetes-event-exporter (`clusterName`, lookups).
 * Built on its first parse (z.lazy): reconcile never parses one, remediate only for some inputs.
 */
const kubeEventSchema = z.lazy(() =>
  z.object({
    clusterName: z.string().max(LIMITS.cluster).nullish(),
    metadata: z
      .object({
        name: kubeName.nullish(),
        namespace: kubeNamespace.nullish(),
        uid: kubeUid.nullish(),
        annotations: labels,
        creationTimestamp: timestamp,
      })
      .nullish(),
    reason: z.string().min(1).max(LIMITS.reason),
    message: boundedText(LIMITS.message).nullish(),
    type: boundedText(LIMITS.reason).nullish(),
    source: z
      .object({
        component: boundedText(LIMITS.component).nullish(),
        host: boundedText(LIMITS.name).nullish(),
      })
      .nullish(),
    reportingComponent: boundedText(LIMITS.component).nullish(),
    reportingController: boundedText(LIMITS.component).nullish(),
    count: z
      .number()
      .int()
      .nonnegative()
      .max(2 ** 31)
      .nullish(),
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    eventTime: timestamp,
    involvedObject: z.object({
      kind: z.string().min(1).max(LIMITS.kind),
      namespace: kubeNamespace.nullish(),
      name: kubeName,
      uid: kubeUid.nullish(),
      apiVersion: boundedText(LIMITS.apiVersion).nullish(),
      fieldPath: boundedText(LIMITS.name).nullish(),
      labels,
      annotations: labels,
      ownerReferences,
      deleted: z.boolean().nullish(),
    }),
  }),
);

export interface KubeEventParseOptions {
  /** Used when the event carries no `clusterName` (e.g. Fluent Bit records). */
  defaultCluster?: string;
  /**
   * When the event was recorded on its way here (the bus envelope's `time`, the log record's
   * timestamp): an event without its own times is dated by it, never by the epoch.
   */
  recordedAt?: number | null;
}

/** Parse one Kubernetes Event object (exporter detail, or the raw Event JSON). */
export function parseKubeEventObject(
  raw: unknown,
  options: KubeEventParseOptions = {},
): Result<KubeEvent> {
  const r = kubeEventSchema.safeParse(raw);
  if (!r.success) return fail(`not a Kubernetes Event: ${problemText(r.error)}`);
  const e = r.data;
  const cluster = e.clusterName ?? options.defaultCluster;
  if (!cluster) return fail('Kubernetes Event without clusterName and no default cluster');
  const o = e.involvedObject;
  return ok({
    cluster,
    name: e.metadata?.name ?? null,
    namespace: e.metadata?.namespace ?? null,
    uid: e.metadata?.uid ?? null,
    reason: e.reason,
    message: e.message ?? '',
    type: e.type ?? null,
    sourceComponent: e.source?.component ?? null,
    sourceHost: e.source?.host ?? null,
    reportingComponent: e.reportingComponent ?? e.reportingController ?? null,
    annotations: e.metadata?.annotations ?? {},
    involvedObject: {
      kind: o.kind,
      namespace: o.namespace ?? null,
      name: o.name,
      uid: o.uid ?? null,
      apiVersion: o.apiVersion ?? null,
      fieldPath: o.fieldPath ?? null,
      labels: o.labels,
      annotations: o.annotations,
      ownerReferences: o.ownerReferences,
      deleted: o.deleted ?? false,
    },
    count: e.count ?? 1,
    at:
      e.lastTimestamp ??
      e.eventTime ??
      e.firstTimestamp ??
      e.metadata?.creationTimestamp ??
      options.recordedAt ??
      null,
  });
}

const envelopeSchema = z.object({
  source: z.string().max(256),
  'detail-type': z.string().max(128),
  time: timestamp,
  detail: z.unknown(),
});

/**
 * Parse a kubernetes-event-exporter event as delivered by EventBridge: the whole envelope
 * (`{source, detail-type, detail}`) or only its `detail`.
 */
export function parseExportedKubeEvent(
  raw: unknown,
  options: KubeEventParseOptions = {},
): Result<KubeEvent> {
  const env = envelopeSchema.safeParse(raw);
  if (!env.success) return parseKubeEventObject(raw, options);
  return parseKubeEventObject(env.data.detail, {
    ...options,
    recordedAt: options.recordedAt ?? env.data.time,
  });
}
