/**
 * ARC's AutoscalingRunnerSet controller: registers the scale set with the Actions service,
 * creates the EphemeralRunnerSet, starts the listener, and mirrors the ERS counts into status.
 */
import type { ActionsService } from '../../actions-service.js';
import type { ModelContext } from '../models/model-context.js';
import { ARC_GROUP } from '../api/resources.js';
import type { StoreEvent } from '../api/store.js';
import { splitKey } from '../models/work-queue.js';
import { addFinalizers, ownOrOwnerKey, Reconciler, removeFinalizer } from '../reconciler.js';
import type { AutoscalingRunnerSet, EphemeralRunnerSet } from '../types.js';
import { ARS_FINALIZER, type ArcBehaviour } from './arc-version.js';
import type { Listener } from './listener.js';
import {
  ANNOTATION_SCALE_SET_ID,
  newEphemeralRunnerSet,
  scaleSetOwner,
} from './resource-builder.js';

const ACTOR = 'arc';
const ARS = 'autoscalingrunnersets';
const ERS = 'ephemeralrunnersets';

export class AutoscalingRunnerSetController extends Reconciler {
  constructor(
    ctx: ModelContext,
    private readonly service: ActionsService,
    private readonly arc: ArcBehaviour,
    private readonly listeners: Map<string, Listener>,
    private readonly startListener: (ars: AutoscalingRunnerSet, scaleSetId: number) => Listener,
  ) {
    super(ctx, 'autoscalingrunnerset');
  }

  protected keysFor(event: StoreEvent): string[] {
    return ownOrOwnerKey(event, `${ARS}.${ARC_GROUP}`, 'AutoscalingRunnerSet', [
      `${ERS}.${ARC_GROUP}`,
    ]);
  }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key);
    const { api } = this.ctx;
    const ars = api.tryGet<AutoscalingRunnerSet>(ARS, ns, name);
    if (!ars) return;
    const owned = api
      .all<EphemeralRunnerSet>(ERS, ns)
      .filter((e) => e.metadata.ownerReferences?.some((r) => r.uid === ars.metadata.uid));

    if (ars.metadata.deletionTimestamp) {
      this.listeners.get(key)?.stop();
      this.listeners.delete(key);
      for (const ers of owned)
        if (!ers.metadata.deletionTimestamp)
          api.delete(ACTOR, ERS, ns, ers.metadata.name as string);
      if (owned.length === 0) {
        removeFinalizer(this.ctx, ACTOR, ARS, ns, name, ARS_FINALIZER);
      }
      return;
    }
    if (!ars.metadata.finalizers?.includes(ARS_FINALIZER)) {
      addFinalizers(this.ctx, ACTOR, ARS, ns, name, [ARS_FINALIZER]);
      return;
    }
    let scaleSetId = Number(ars.metadata.annotations?.[ANNOTATION_SCALE_SET_ID] ?? 0);
    if (!scaleSetId) {
      scaleSetId = this.service.registerScaleSet({
        owner: scaleSetOwner(ars.spec.githubConfigUrl),
        name: ars.spec.runnerScaleSetName ?? name,
      });
      this.ctx.log('arc/autoscalingrunnerset', 'Created runner scale set', {
        autoscalingrunnerset: key,
        runnerScaleSetId: scaleSetId,
      });
      api.modify<AutoscalingRunnerSet>(ACTOR, ARS, ns, name, (o) => {
        o.metadata.annotations = {
          ...(o.metadata.annotations ?? {}),
          [ANNOTATION_SCALE_SET_ID]: String(scaleSetId),
          'actions.github.com/runner-scale-set-name': ars.spec.runnerScaleSetName ?? name,
        };
      });
      return;
    }
    const live = owned.filter((e) => !e.metadata.deletionTimestamp);
    if (live.length === 0) {
      api.create(ACTOR, ERS, ns, newEphemeralRunnerSet(ars, scaleSetId, this.arc));
      return;
    }
    if (!this.listeners.has(key)) this.listeners.set(key, this.startListener(ars, scaleSetId));
    const ers = live[0] as EphemeralRunnerSet;
    const s = ers.status;
    // 0.15 (#4570): the counts moved to metrics; the status keeps only its phase.
    const status = !this.arc.ersStatusCounts
      ? { phase: 'Running' }
      : {
          currentRunners: s?.currentReplicas ?? 0,
          pendingEphemeralRunners: s?.pendingEphemeralRunners ?? 0,
          runningEphemeralRunners: s?.runningEphemeralRunners ?? 0,
          failedEphemeralRunners: s?.failedEphemeralRunners ?? 0,
          phase: 'Running',
        };
    api.modify<AutoscalingRunnerSet>(ACTOR, ARS, ns, name, (o) => void (o.status = status), {
      subresource: 'status',
    });
  }
}
