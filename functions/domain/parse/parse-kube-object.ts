import * as z from 'zod';
import type { EphemeralRunner, Node, Pod, RunnerFailure } from '../model/cluster-facts.js';
import {
  conditionsSchema,
  containerStatusesSchema,
  labels,
  objectMetaSchema,
  timestamp,
} from '../model/kube-schemas.js';
import { fail, ok, type Result } from '../model/result.js';
import { problemText } from '../model/zod-problems.js';

const podSchema = z.object({
  metadata: objectMetaSchema,
  spec: z
    .object({
      nodeName: z.string().nullish(),
      containers: z
        .array(z.object({ name: z.string(), image: z.string().max(512).nullish() }))
        .nullish(),
    })
    .nullish(),
  status: z
    .object({
      phase: z.string().nullish(),
      reason: z.string().nullish(),
      message: z.string().nullish(),
      conditions: conditionsSchema,
      containerStatuses: containerStatusesSchema,
      initContainerStatuses: containerStatusesSchema,
    })
    .nullish(),
});

/** Parse a Pod as returned by the Kubernetes API (JSON or @kubernetes/client-node objects). */
/** ARC's runner container is named `runner` (gha-runner-scale-set's template). */
const RUNNER_CONTAINER = 'runner';

export function parsePod(raw: unknown, cluster: string): Result<Pod> {
  const r = podSchema.safeParse(raw);
  if (!r.success) return fail(`not a Pod: ${problemText(r.error)}`);
  const { metadata, spec, status } = r.data;
  return ok({
    cluster,
    metadata,
    nodeName: spec?.nodeName ?? null,
    runnerImage: spec?.containers?.find((c) => c.name === RUNNER_CONTAINER)?.image ?? null,
    phase: status?.phase ?? null,
    reason: status?.reason ?? null,
    message: status?.message ?? null,
    conditions: status?.conditions ?? [],
    containerStatuses: status?.containerStatuses ?? [],
    initContainerStatuses: status?.initContainerStatuses ?? [],
  });
}

/** `failures`: map podUID → bool (ARC ≤ 0.11) or → RFC 3339 time (ARC ≥ 0.12). */
const failuresSchema = z
  .record(z.string(), z.union([z.boolean(), z.string(), z.date()]))
  .nullish()
  .transform((m): { failures: RunnerFailure[]; shape: EphemeralRunner['failuresShape'] } => {
    const entries = Object.entries(m ?? {});
    if (entries.length === 0) return { failures: [], shape: 'none' };
    const shape = entries.some(([, v]) => typeof v === 'boolean') ? 'bool' : 'time';
    const failures = entries.map(([podUid, v]) => ({
      podUid,
      at: typeof v === 'boolean' ? null : timestamp.parse(v),
    }));
    return { failures, shape };
  });

const int = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).nullish();

const ephemeralRunnerSchema = z.object({
  metadata: objectMetaSchema,
  status: z
    .object({
      phase: z.string().nullish(),
      reason: z.string().nullish(),
      message: z.string().nullish(),
      ready: z.boolean().nullish(),
      runnerId: int,
      runnerName: z.string().nullish(),
      failures: failuresSchema,
      jobId: z.string().nullish(),
      jobRequestId: int,
      jobRepositoryName: z.string().nullish(),
      jobWorkflowRef: z.string().nullish(),
      workflowRunId: int,
      jobDisplayName: z.string().nullish(),
    })
    .nullish(),
});

/** Parse an EphemeralRunner of any ARC scale-set version (0.2 … 0.14+). */
export function parseEphemeralRunner(raw: unknown, cluster: string): Result<EphemeralRunner> {
  const r = ephemeralRunnerSchema.safeParse(raw);
  if (!r.success) return fail(`not an EphemeralRunner: ${problemText(r.error)}`);
  const { metadata, status: s } = r.data;
  return ok({
    cluster,
    metadata,
    phase: s?.phase ?? null,
    reason: s?.reason ?? null,
    message: s?.message ?? null,
    ready: s?.ready ?? false,
    runnerId: s?.runnerId ?? null,
    runnerName: s?.runnerName ?? null,
    failures: s?.failures?.failures ?? [],
    failuresShape: s?.failures?.shape ?? 'none',
    job: {
      jobId: s?.jobId ? s.jobId : null,
      jobRequestId: s?.jobRequestId ?? null,
      jobRepositoryName: s?.jobRepositoryName ? s.jobRepositoryName : null,
      jobWorkflowRef: s?.jobWorkflowRef ?? null,
      workflowRunId: s?.workflowRunId ?? null,
      jobDisplayName: s?.jobDisplayName ?? null,
    },
  });
}

/** `aws:///eu-west-1a/i-0123456789abcdef0` → `i-0123456789abcdef0`. */
export function instanceIdFromProviderId(providerID: string | null): string | null {
  if (!providerID?.startsWith('aws://')) return null;
  const m = /\/(i-[0-9a-f]+)$/.exec(providerID);
  return m?.[1] ?? null;
}

const nodeSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    uid: z.string().nullish(),
    labels,
    deletionTimestamp: timestamp,
  }),
  spec: z
    .object({
      providerID: z.string().nullish(),
      unschedulable: z.boolean().nullish(),
      taints: z
        .array(z.object({ key: z.string(), value: z.string().nullish(), effect: z.string() }))
        .nullish(),
    })
    .nullish(),
  status: z.object({ conditions: conditionsSchema }).nullish(),
});

export function parseNode(raw: unknown, cluster: string): Result<Node> {
  const r = nodeSchema.safeParse(raw);
  if (!r.success) return fail(`not a Node: ${problemText(r.error)}`);
  const { metadata, spec, status } = r.data;
  const providerID = spec?.providerID ?? null;
  return ok({
    cluster,
    name: metadata.name,
    uid: metadata.uid ?? '',
    labels: metadata.labels,
    providerID,
    instanceId: instanceIdFromProviderId(providerID),
    conditions: status?.conditions ?? [],
    taints: (spec?.taints ?? []).map((t) => ({
      key: t.key,
      value: t.value ?? null,
      effect: t.effect,
    })),
    unschedulable: spec?.unschedulable ?? false,
    deletionTimestamp: metadata.deletionTimestamp,
  });
}
