import { z } from 'zod';
import { lossKindSchema } from '../model/loss.js';

/** The policy document's shape: every key optional (defaults fill in), unknown keys rejected. */
const seconds = z.number().int().nonnegative();
const sw = { enabled: z.boolean().optional(), dryRun: z.boolean().optional() };

const rulesSchema = z
  .object({
    freePoisonedSlot: z
      .object({
        ...sw,
        graceSeconds: seconds.optional(),
        arcWontRecoverGraceSeconds: seconds.optional(),
        /** The old name of `arcWontRecoverGraceSeconds`, still accepted; the new name wins. */
        legacyArcGraceSeconds: seconds.optional(),
        forceDeletePodOnDeadNode: z.boolean().optional(),
        removeStuckFinalizerAfterSeconds: seconds.nullable().optional(),
      })
      .strict()
      .transform(({ legacyArcGraceSeconds, ...rule }) => ({
        ...rule,
        arcWontRecoverGraceSeconds: rule.arcWontRecoverGraceSeconds ?? legacyArcGraceSeconds,
      })),
    starvingQueue: z.object({ ...sw, queuedSeconds: seconds.optional() }).strict(),
    rerunKilledJob: z
      .object({
        ...sw,
        budget: z.number().int().min(0).max(10).optional(),
        retryIntervalSeconds: z.number().int().min(1).optional(),
        retryForSeconds: seconds.optional(),
        excludeCauses: z.array(lossKindSchema).optional(),
      })
      .strict(),
    hungJob: z
      .object({
        ...sw,
        graceSeconds: seconds.optional(),
        forceCancelAfterSeconds: seconds.optional(),
        cancelWithLiveJobs: z.boolean().optional(),
        retryIntervalSeconds: z.number().int().min(1).optional(),
        retryForSeconds: seconds.optional(),
      })
      .strict(),
    orphanRegistration: z.object({ ...sw, graceSeconds: seconds.optional() }).strict(),
    warnedNode: z.object({ ...sw, replaceIdle: z.boolean().optional() }).strict(),
    deprecatedRunner: z.object({ ...sw }).strict(),
    circuitBreaker: z
      .object({
        ...sw,
        windowSeconds: z.number().int().min(1).optional(),
        maxLossesPerScaleSet: z.number().int().min(1).optional(),
        maxLossesPerCluster: z.number().int().min(1).optional(),
      })
      .strict(),
  })
  .partial()
  .strict();

const patterns = z.array(z.string().min(1)).optional();
const overrideShape = {
  ...sw,
  rules: rulesSchema.optional(),
  allow: z.object({ namespaces: patterns, repositories: patterns }).strict().optional(),
};
const overrideSchema = z.object(overrideShape).strict();

export const policySchema = z
  .object({
    dryRun: z.boolean().optional(),
    checkRuns: z.boolean().optional(),
    allow: z
      .object({ clusters: patterns, namespaces: patterns, repositories: patterns })
      .strict()
      .optional(),
    rules: rulesSchema.optional(),
    clusters: z
      .record(
        z.string(),
        z
          .object({ ...overrideShape, scaleSets: z.record(z.string(), overrideSchema).optional() })
          .strict(),
      )
      .optional(),
    scaleSets: z.record(z.string(), overrideSchema).optional(),
  })
  .strict();
