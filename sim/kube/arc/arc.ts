/** ARC in scale-set mode: the three controllers and one listener per AutoscalingRunnerSet. */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { ModelContext } from '../models/model-context.js';
import { nsName } from '../models/work-queue.js';
import type { AutoscalingRunnerSet } from '../types.js';
import {
  arcBehaviourWith,
  type ArcBehaviour,
  type ArcOverrides,
  type ArcVersion,
} from './arc-version.js';
import { AutoscalingRunnerSetController } from './autoscaling-runner-set-controller.js';
import { EphemeralRunnerController } from './ephemeral-runner-controller.js';
import { EphemeralRunnerSetController } from './ephemeral-runner-set-controller.js';
import { Listener } from './listener.js';

export class Arc {
  readonly behaviour: ArcBehaviour;
  readonly listeners = new Map<string, Listener>();
  private readonly controllers: { stop(): void }[];

  constructor(
    private readonly ctx: ModelContext,
    private readonly service: ActionsService,
    version: ArcVersion,
    overrides: ArcOverrides = {},
  ) {
    this.behaviour = arcBehaviourWith(version, overrides);
    this.controllers = [
      new AutoscalingRunnerSetController(ctx, service, this.behaviour, this.listeners, (ars, id) =>
        this.newListener(ars, id),
      ),
      new EphemeralRunnerSetController(ctx, service, this.behaviour),
      new EphemeralRunnerController(ctx, service, this.behaviour),
    ];
  }

  private newListener(ars: AutoscalingRunnerSet, scaleSetId: number): Listener {
    return new Listener(
      this.ctx,
      this.service,
      this.behaviour,
      ars.metadata.namespace as string,
      ars.metadata.name as string,
      scaleSetId,
    );
  }

  /** Routes a runner's JobStarted message to its scale set's listener. */
  jobStarted(
    namespace: string,
    scaleSetName: string,
    runnerName: string,
    job: JobAssignment,
  ): void {
    this.listeners.get(nsName(namespace, scaleSetName))?.jobStarted(runnerName, job);
  }

  stop(): void {
    for (const c of this.controllers) c.stop();
    for (const l of this.listeners.values()) l.stop();
  }
}
