import { z } from 'zod';
import type { KubeEvent } from './cluster-facts.js';
import { describeIssues, labels, ownerReferences, timestamp } from './kube-schemas.js';
import { fail, ok, type Result } from './result.js';

/** A core/v1 Event, optionally enriched by kubernetes-event-exporter (`clusterName`, lookups). */
const kubeEventSchema = z.object({
  clusterName: z.string().nullish(),
  metadata: z
    .object({
      name: z.string().nullish(),
      namespace: z.string().nullish(),
      uid: z.string().nullish(),
      annotations: labels,
      creationTimestamp: timestamp,
    })
    .nullish(),
  reason: z.string().min(1),
  message: z.string().nullish(),
  type: z.string().nullish(),
  source: z.object({ component: z.string().nullish(), host: z.string().nullish() }).nullish(),
  reportingComponent: z.string().nullish(),
  count: z.number().nullish(),
  firstTimestamp: timestamp,
  lastTimestamp: timestamp,
  eventTime: timestamp,
  involvedObject: z.object({
    kind: z.string().min(1),
    namespace: z.string().nullish(),
    name: z.string().min(1),
    uid: z.string().nullish(),
    apiVersion: z.string().nullish(),
    fieldPath: z.string().nullish(),
    labels,
    annotations: labels,
    ownerReferences,
    deleted: z.boolean().nullish(),
  }),
});

export interface KubeEventParseOptions {
  /** Used when the event carries no `clusterName` (e.g. Fluent Bit records). */
  defaultCluster?: string;
}

/** Parse one Kubernetes Event object (exporter detail, or the raw Event JSON). */
export function parseKubeEventObject(
  raw: unknown,
  options: KubeEventParseOptions = {},
): Result<KubeEvent> {
  const r = kubeEventSchema.safeParse(raw);
  if (!r.success) return fail(`not a Kubernetes Event: ${describeIssues(r.error)}`);
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
    reportingComponent: e.reportingComponent ?? null,
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
    at: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? null,
  });
}

const envelopeSchema = z.object({
  source: z.string(),
  'detail-type': z.string(),
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
  return parseKubeEventObject(env.success ? env.data.detail : raw, options);
}
