import * as z from 'zod';
import type { Condition, ContainerStatus, ObjectMeta, OwnerReference } from './cluster-facts.js';

/**
 * Kubernetes' own limits (a DNS subdomain name is at most 253 characters, a namespace or label
 * value 63, a uid is a 36-character UUID), with headroom; anything longer is not from a cluster
 * and is rejected before it can reach a store key or a log line.
 */
export const LIMITS = {
  name: 253,
  namespace: 63,
  uid: 64,
  cluster: 100,
  reason: 128,
  component: 253,
  kind: 63,
  apiVersion: 253,
  /** An Event message is truncated by the API server to 1 KiB; exporters add little. */
  message: 4096,
  mapEntries: 256,
  mapValue: 16_384,
  listItems: 256,
} as const;

export const kubeName = z.string().min(1).max(LIMITS.name);
export const kubeNamespace = z.string().max(LIMITS.namespace);
export const kubeUid = z.string().max(LIMITS.uid);
export const boundedText = (max: number) => z.string().max(max);

/** A Kubernetes time: RFC 3339 string (JSON), a Date (@kubernetes/client-node), or epoch ms. */
export const timestamp = z
  .union([z.string(), z.date(), z.number()])
  .nullish()
  .transform((v): number | null => {
    if (v === null || v === undefined) return null;
    const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : v.getTime();
    // Dates are valid within ±8.64e15 ms; anything else is garbage.
    return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? ms : null;
  });

const stringMap = z
  .record(z.string().max(LIMITS.name), z.unknown())
  .nullish()
  .refine((m) => Object.keys(m ?? {}).length <= LIMITS.mapEntries, {
    message: `more than ${LIMITS.mapEntries} entries`,
  })
  .refine(
    (m) =>
      Object.values(m ?? {}).every((v) => typeof v !== 'string' || v.length <= LIMITS.mapValue),
    { message: `a value longer than ${LIMITS.mapValue} characters` },
  )
  .transform((m): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(m ?? {})) if (typeof v === 'string') out[k] = v;
    return out;
  });

const ownerReferenceSchema = z
  .object({
    apiVersion: z.string().max(LIMITS.apiVersion).nullish(),
    kind: z.string().max(LIMITS.kind),
    name: z.string().max(LIMITS.name),
    uid: kubeUid.nullish(),
    controller: z.boolean().nullish(),
  })
  .transform((o): OwnerReference => ({
    apiVersion: o.apiVersion ?? '',
    kind: o.kind,
    name: o.name,
    uid: o.uid ?? '',
    controller: o.controller ?? false,
  }));

export const ownerReferences = z
  .array(ownerReferenceSchema)
  .max(LIMITS.listItems)
  .nullish()
  .transform((a) => a ?? []);
export const labels = stringMap;

export const objectMetaSchema = z
  .object({
    name: kubeName,
    namespace: kubeNamespace.nullish(),
    uid: kubeUid.nullish(),
    labels: stringMap,
    annotations: stringMap,
    ownerReferences,
    finalizers: z.array(z.string().max(LIMITS.name)).max(LIMITS.listItems).nullish(),
    creationTimestamp: timestamp,
    deletionTimestamp: timestamp,
  })
  .transform((m): ObjectMeta => ({
    name: m.name,
    namespace: m.namespace ?? '',
    uid: m.uid ?? '',
    labels: m.labels,
    annotations: m.annotations,
    ownerReferences: m.ownerReferences,
    finalizers: m.finalizers ?? [],
    creationTimestamp: m.creationTimestamp,
    deletionTimestamp: m.deletionTimestamp,
  }));

export const conditionsSchema = z
  .array(
    z
      .object({
        type: z.string(),
        status: z.string(),
        reason: z.string().nullish(),
        message: z.string().nullish(),
        lastTransitionTime: timestamp,
      })
      .transform((c): Condition => ({
        type: c.type,
        status: c.status,
        reason: c.reason ?? null,
        message: c.message ?? null,
        lastTransitionTime: c.lastTransitionTime,
      })),
  )
  .nullish()
  .transform((a) => a ?? []);

export const containerStatusesSchema = z
  .array(
    z
      .object({
        name: z.string(),
        state: z
          .object({
            terminated: z
              .object({
                reason: z.string().nullish(),
                exitCode: z.number().int(),
                message: z.string().nullish(),
              })
              .nullish(),
          })
          .nullish(),
      })
      .transform((c): ContainerStatus => {
        const t = c.state?.terminated;
        return {
          name: c.name,
          terminated: t
            ? { reason: t.reason ?? null, exitCode: t.exitCode, message: t.message ?? null }
            : null,
        };
      }),
  )
  .nullish()
  .transform((a) => a ?? []);
