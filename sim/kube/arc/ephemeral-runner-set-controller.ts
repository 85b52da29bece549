/**
 * ARC's EphemeralRunnerSet controller (controllers/actions.github.com/
 * ephemeralrunnerset_controller.go): buckets its runners by phase, deletes finished ones, and
 * scales to `spec.replicas` counting `pending + running + failed` (scaleTotal; the seed bug:
 * Failed runners hold slots). Scale-down (only on a patchID 0 patch) removes idle runners only.
 * With the patch-ID gate (real in 0.9.3, 0.13.1 and 0.15), it acts only when `spec.patchID` is 0
 * or differs from the newest ER's `actions.github.com/patch-id` annotation (deleting ERs
 * included), i.e. once per listener batch.
 */
import type { ActionsService } from '../../actions-service.js';
import { ApiError } from '../api/errors.js';
import type { ModelContext } from '../models/model-context.js';
import { ARC_GROUP } from '../api/resources.js';
import type { StoreEvent } from '../api/store.js';
import { nsName, splitKey } from '../models/work-queue.js';
import { addFinalizers, ownOrOwnerKey, Reconciler, removeFinalizer } from '../reconciler.js';
import type { EphemeralRunner, EphemeralRunnerSet } from '../types.js';
import { ERS_FINALIZER, type ArcBehaviour } from './arc-version.js';
import { ANNOTATION_PATCH_ID, newEphemeralRunner } from './resource-builder.js';

const ACTOR = 'arc';
const ERS = 'ephemeralrunnersets';
const ER = 'ephemeralrunners';

export interface RunnerBuckets {
  pending: EphemeralRunner[];
  running: EphemeralRunner[];
  finished: EphemeralRunner[];
  failed: EphemeralRunner[];
  deleting: EphemeralRunner[];
}

function bucketRunners(runners: EphemeralRunner[]): RunnerBuckets {
  const b: RunnerBuckets = { pending: [], running: [], finished: [], failed: [], deleting: [] };
  for (const er of runners) {
    if (er.metadata.deletionTimestamp) b.deleting.push(er);
    else if (er.status?.phase === 'Running') b.running.push(er);
    else if (er.status?.phase === 'Succeeded') b.finished.push(er);
    else if (er.status?.phase === 'Failed') b.failed.push(er);
    else b.pending.push(er);
  }
  return b;
}

/** `newEphemeralRunnerState().latestPatchID`: the highest patch-id annotation among the ERs. */
export function latestPatchId(runners: EphemeralRunner[]): number {
  let latest = 0;
  for (const er of runners) {
    const id = Number.parseInt(er.metadata.annotations?.[ANNOTATION_PATCH_ID] ?? '', 10);
    if (Number.isFinite(id) && id > latest) latest = id;
  }
  return latest;
}

export class EphemeralRunnerSetController extends Reconciler {
  constructor(
    ctx: ModelContext,
    private readonly service: ActionsService,
    private readonly arc: ArcBehaviour,
  ) {
    super(ctx, 'ephemeralrunnerset');
  }

  protected keysFor(event: StoreEvent): string[] {
    return ownOrOwnerKey(event, `${ERS}.${ARC_GROUP}`, 'EphemeralRunnerSet', [
      `${ER}.${ARC_GROUP}`,
    ]);
  }

  private owned(ers: EphemeralRunnerSet): EphemeralRunner[] {
    return this.ctx.api.all<EphemeralRunner>(
      ER,
      ers.metadata.namespace,
      undefined,
      (er) => er.metadata.ownerReferences?.some((r) => r.uid === ers.metadata.uid) === true,
    );
  }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key);
    const { api } = this.ctx;
    const ers = api.tryGet<EphemeralRunnerSet>(ERS, ns, name);
    if (!ers) return;
    const log = (message: string, fields: Record<string, unknown> = {}) =>
      this.ctx.log('arc/ephemeralrunnerset', message, { ephemeralrunnerset: key, ...fields });

    if (ers.metadata.deletionTimestamp) {
      const runners = this.owned(ers);
      for (const er of runners)
        if (!er.metadata.deletionTimestamp) api.delete(ACTOR, ER, ns, er.metadata.name as string);
      if (runners.length === 0) {
        removeFinalizer(this.ctx, ACTOR, ERS, ns, name, ERS_FINALIZER);
      }
      return;
    }
    if (!ers.metadata.finalizers?.includes(ERS_FINALIZER)) {
      addFinalizers(this.ctx, ACTOR, ERS, ns, name, [ERS_FINALIZER]);
      return;
    }

    const owned = this.owned(ers);
    const b = bucketRunners(owned);
    log('Ephemeral runner counts', {
      pending: b.pending.length,
      running: b.running.length,
      finished: b.finished.length,
      failed: b.failed.length,
      deleting: b.deleting.length,
    });
    const total = b.pending.length + b.running.length + b.failed.length; // scaleTotal()
    const patchID = ers.spec.patchID ?? 0;
    if (!this.arc.patchIdGate || patchID === 0 || patchID !== latestPatchId(owned))
      this.scale(ers, b, total);
    else log('Patch already handled; waiting for the next batch', { patchID });
    const status = this.arc.ersStatusCounts
      ? {
          currentReplicas: total,
          pendingEphemeralRunners: b.pending.length,
          runningEphemeralRunners: b.running.length,
          failedEphemeralRunners: b.failed.length,
          phase: 'Running',
        }
      : { phase: 'Running' };
    api.modify<EphemeralRunnerSet>(ACTOR, ERS, ns, name, (o) => void (o.status = status), {
      subresource: 'status',
    });
  }

  private scale(ers: EphemeralRunnerSet, b: RunnerBuckets, total: number): void {
    const { api } = this.ctx;
    const ns = ers.metadata.namespace;
    const log = (message: string, fields: Record<string, unknown> = {}) =>
      this.ctx.log('arc/ephemeralrunnerset', message, {
        ephemeralrunnerset: nsName(ns, ers.metadata.name as string),
        ...fields,
      });
    for (const er of b.finished) {
      log('Deleting finished ephemeral runner', { name: er.metadata.name });
      try {
        api.delete(ACTOR, ER, ns, er.metadata.name as string);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    // 0.15 (#4642): a reconcile that cleaned up finished runners defers its scale-up to the next
    // listener patch.
    if (this.arc.deletingCountsTowardsCapacity && b.finished.length > 0) return;
    const replicas = ers.spec.replicas ?? 0;
    // 0.15 scaleUpTotal: runners being deleted still hold their registration and their slot.
    const scaleUpTotal = total + (this.arc.deletingCountsTowardsCapacity ? b.deleting.length : 0);
    log('Scaling comparison', { current: scaleUpTotal, desired: replicas });
    if (scaleUpTotal < replicas) {
      const count = replicas - scaleUpTotal;
      log('Creating new ephemeral runners (scale up)', { count });
      for (let i = 0; i < count; i++) api.create(ACTOR, ER, ns, newEphemeralRunner(ers, this.arc));
    } else if (ers.spec.patchID === 0 && total > replicas) {
      // Only a "force state" patch (patchID 0, an empty batch at minRunners) scales down.
      let toDelete = total - replicas;
      const idle = [...b.pending, ...b.running].filter((er) => !this.hasJob(er));
      if (idle.length === 0)
        log('No pending or running ephemeral runners running at this time for scale down');
      for (const er of idle) {
        if (toDelete === 0) break;
        const runnerId = er.status?.runnerId;
        if (runnerId && this.service.removeRunner(runnerId) === 'busy') continue;
        log('Deleting ephemeral runner (scale down)', { name: er.metadata.name });
        try {
          api.delete(ACTOR, ER, ns, er.metadata.name as string);
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
        toDelete--;
      }
    }
  }

  private hasJob(er: EphemeralRunner): boolean {
    return this.arc.writesJobId
      ? (er.status?.jobId ?? '').length > 0
      : (er.status?.jobRequestId ?? 0) > 0;
  }
}
