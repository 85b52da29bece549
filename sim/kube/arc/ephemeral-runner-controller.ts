/**
 * ARC's EphemeralRunner controller (controllers/actions.github.com/ephemeralrunner_controller.go
 * at 0.9.3 and 0.13.1; 0.15 from PRs #4646 and #4664), per version: registration (JIT), secret
 * and pod creation, reaction to pod failure, cleanup of a finished or failed runner's pod and
 * secret, and the finalizer path that holds deletion while GitHub says the runner still runs a
 * job (0.15: in a background queue, after the finalizer is gone).
 */
import type { ActionsService } from '../../actions-service.js';
import { ApiError } from '../api/errors.js';
import type { ModelContext } from '../models/model-context.js';
import { ARC_GROUP } from '../api/resources.js';
import type { StoreEvent } from '../api/store.js';
import { splitKey, type ReconcileResult } from '../models/work-queue.js';
import { addFinalizers, ownOrOwnerKey, Reconciler, removeFinalizer } from '../reconciler.js';
import { isoTime, type ContainerStatus, type EphemeralRunner, type Pod } from '../types.js';
import { ARC_FINALIZER, ARC_REGISTRATION_FINALIZER, type ArcBehaviour } from './arc-version.js';
import { controllerRef, newRunnerPod } from './resource-builder.js';

const ACTOR = 'arc';
const ER = 'ephemeralrunners';

export class EphemeralRunnerController extends Reconciler {
  constructor(
    ctx: ModelContext,
    private readonly service: ActionsService,
    private readonly arc: ArcBehaviour,
  ) {
    super(ctx, 'ephemeralrunner');
  }

  protected keysFor(event: StoreEvent): string[] {
    return ownOrOwnerKey(event, `${ER}.${ARC_GROUP}`, 'EphemeralRunner', ['pods', 'secrets']);
  }

  /** Merges `fields` into the ER's status (the status subresource). */
  private mergeStatus(
    ns: string | undefined,
    name: string,
    fields: NonNullable<EphemeralRunner['status']>,
  ): void {
    this.ctx.api.modify<EphemeralRunner>(
      ACTOR,
      ER,
      ns,
      name,
      (o) => void (o.status = { ...(o.status ?? {}), ...fields }),
      { subresource: 'status' },
    );
  }

  private log(message: string, er: string, fields: Record<string, unknown> = {}) {
    this.ctx.log('arc/ephemeralrunner', message, { ephemeralrunner: er, ...fields });
  }

  reconcile(key: string): ReconcileResult | void {
    const [ns, name] = splitKey(key);
    const { api } = this.ctx;
    const er = api.tryGet<EphemeralRunner>(ER, ns, name);
    if (!er) return;

    if (er.metadata.deletionTimestamp) return this.finalize(er);

    const finalizers = er.metadata.finalizers ?? [];
    if (!finalizers.includes(ARC_REGISTRATION_FINALIZER) || !finalizers.includes(ARC_FINALIZER)) {
      this.log('Adding finalizers', key);
      addFinalizers(this.ctx, ACTOR, ER, ns, name, [ARC_REGISTRATION_FINALIZER, ARC_FINALIZER]);
      return;
    }

    const phase = er.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Outdated') {
      // IsDone(): cleanupResources deletes the pod and the JIT secret (0.9.3 one after the
      // other, waiting for the pod to go; 0.13.1 both at once), then stops reconciling.
      if (!this.cleanupResources(er)) {
        this.log('Waiting for ephemeral runner owned resources to be deleted', key);
        return;
      }
      this.log(
        'EphemeralRunner has already finished. Stopping reconciliation and waiting for EphemeralRunnerSet to clean it up',
        key,
        { phase },
      );
      return;
    }

    if (!er.status?.runnerId) {
      const runnerId = this.service.registerRunner(er.spec.runnerScaleSetId, name);
      this.log('Created ephemeral runner JIT config', key, { runnerId });
      this.mergeStatus(ns, name, {
        runnerId,
        runnerName: name,
        ...(this.arc.jitConfigInStatus ? { runnerJITConfig: `jit-${runnerId}` } : {}),
      });
      return;
    }

    if (!api.tryGet('secrets', ns, name)) {
      this.log('Creating new ephemeral runner secret for jitconfig.', key);
      api.create(ACTOR, 'secrets', ns, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          namespace: ns,
          labels: { ...(er.metadata.labels ?? {}) },
          ownerReferences: [controllerRef(er)],
        },
        type: 'Opaque',
        data: { jitToken: Buffer.from(`jit-${er.status.runnerId}`).toString('base64') },
      });
      return;
    }

    const pod = api.tryGet<Pod>('pods', ns, name);
    if (!pod) return this.podMissing(er);
    return this.arc.version === '0.9' ? this.podExists09(er, pod) : this.podExists13(er, pod);
  }

  private failureCount(er: EphemeralRunner): number {
    return Object.keys(er.status?.failures ?? {}).length;
  }

  private podMissing(er: EphemeralRunner): ReconcileResult | void {
    const { api, clock } = this.ctx;
    const ns = er.metadata.namespace;
    const name = er.metadata.name as string;
    const failures = this.failureCount(er);
    if (this.arc.version === '0.9') {
      if (failures > this.arc.maxFailures) {
        this.log('EphemeralRunner has failed more than 5 times. Marking it as failed', name);
        this.mergeStatus(ns, name, {
          phase: 'Failed',
          reason: 'TooManyPodFailures',
          message: 'Pod has failed to start more than 5 times',
        });
        this.service.removeRunner(er.status?.runnerId as number);
        return;
      }
    } else {
      if (failures > this.arc.maxFailures) {
        this.log(
          'EphemeralRunner has failed more than the maximum number of times. Deleting ephemeral runner so it can be re-created',
          name,
          { failures },
        );
        api.delete(ACTOR, ER, ns, name);
        return;
      }
      if (failures > 0) {
        const last = Math.max(
          ...Object.values(er.status?.failures ?? {}).map((t) => Date.parse(String(t))),
        );
        const backoff =
          (this.arc.backoffSeconds[Math.min(failures, this.arc.backoffSeconds.length - 1)] ?? 0) *
          1000;
        const wait = last + backoff - clock.now();
        if (wait > 0) {
          this.log('Backing off the creation of the runner pod', name, { failures, waitMs: wait });
          return { requeueAfterMs: wait };
        }
      }
    }
    // No HasJob() check before re-creating (#4588): the new pod reuses the spent JIT config.
    this.log('Ephemeral runner pod does not exist. Creating new ephemeral runner', name);
    try {
      api.create(ACTOR, 'pods', ns, newRunnerPod(er, this.arc));
    } catch (e) {
      // 0.9.3: IsInvalid || IsForbidden; 0.13.1: a quota 403 is retried instead.
      const invalid =
        e instanceof ApiError &&
        (e.code === 422 ||
          (e.code === 403 && (this.arc.version === '0.9' || !/exceeded quota/.test(e.message))));
      if (!invalid) throw e;
      // markAsFailed(..., ReasonInvalidPodFailure): the ER stays Failed and keeps its slot.
      this.log('Failed to create a pod for this ephemeral runner; marking it failed', name, {
        error: e.message,
      });
      this.mergeStatus(ns, name, { phase: 'Failed', reason: 'InvalidPod', message: e.message });
      this.service.removeRunner(er.status?.runnerId as number);
    }
  }

  /** ARC <= 0.11.0: Evicted pods are retried only when the container is not terminated. */
  private podExists09(er: EphemeralRunner, pod: Pod): ReconcileResult | void {
    const cs = runnerContainerStatus(pod);
    const name = er.metadata.name as string;
    if (!cs) {
      this.log('Waiting for runner container status to be available', name);
      return;
    }
    if (!cs.state.terminated) {
      if (pod.status?.phase === 'Failed' && pod.status.reason === 'Evicted') {
        this.log(
          'Pod set the termination phase, but container state is not terminated. Deleting pod',
          name,
        );
        return this.deletePodAsFailed(er, pod);
      }
      return this.updateRunStatusFromPod(er, pod);
    }
    if (cs.state.terminated.exitCode !== 0) {
      this.log('Ephemeral runner container failed', name, {
        exitCode: cs.state.terminated.exitCode,
      });
      return this.deletePodAsFailed(er, pod);
    }
    // Exit 0: the controller asks the service whether the runner still exists. A runner that
    // exited 0 without taking a job (a deprecated version, a broken entrypoint) is still
    // registered: its pod is deleted as failed and re-created.
    const runnerId = er.status?.runnerId;
    if (runnerId && this.service.runnerRegistered?.(runnerId) === true) {
      this.log(
        'Ephemeral runner pod has finished, but the runner still exists in the service. Deleting the pod to restart it.',
        name,
      );
      return this.deletePodAsFailed(er, pod);
    }
    this.log('Ephemeral runner has finished since it does not exist in the service anymore', name);
    this.mergeStatus(er.metadata.namespace, name, { phase: 'Succeeded' });
  }

  /** ARC >= 0.13.1 (HEAD-like): every PodFailed is handled; a runner with a job loses its ER. */
  private podExists13(er: EphemeralRunner, pod: Pod): ReconcileResult | void {
    const cs = runnerContainerStatus(pod);
    const name = er.metadata.name as string;
    if (pod.status?.phase === 'Failed') {
      if (!cs?.state.terminated) return this.deleteEphemeralRunnerOrPod(er, pod);
      if (cs.state.terminated.exitCode === 0) {
        this.log('Runner container exited with code 0; deleting the ephemeral runner', name);
        this.ctx.api.delete(ACTOR, ER, er.metadata.namespace, name);
        return;
      }
      return this.deleteEphemeralRunnerOrPod(er, pod);
    }
    if (!cs) {
      this.log('Waiting for runner container status to be available', name);
      return;
    }
    if (cs.state.terminated) {
      if (cs.state.terminated.exitCode === 0) {
        this.log('Runner container exited with code 0; deleting the ephemeral runner', name);
        this.ctx.api.delete(ACTOR, ER, er.metadata.namespace, name);
        return;
      }
      return this.deleteEphemeralRunnerOrPod(er, pod);
    }
    return this.updateRunStatusFromPod(er, pod);
  }

  private hasJob(er: EphemeralRunner): boolean {
    return this.arc.writesJobId
      ? (er.status?.jobId ?? '').length > 0
      : (er.status?.jobRequestId ?? 0) > 0;
  }

  private deleteEphemeralRunnerOrPod(er: EphemeralRunner, pod: Pod): ReconcileResult | void {
    const name = er.metadata.name as string;
    if (this.hasJob(er)) {
      this.log(
        'Ephemeral runner has a job assigned, but the pod has failed. Deleting ephemeral runner: ephemeral runner either has faulty entrypoint or something external killing the runner',
        name,
        { jobId: er.status?.jobId },
      );
      this.ctx.api.delete(ACTOR, ER, er.metadata.namespace, name);
      this.service.removeRunner(er.status?.runnerId as number);
      return;
    }
    return this.deletePodAsFailed(er, pod);
  }

  private deletePodAsFailed(er: EphemeralRunner, pod: Pod): ReconcileResult | void {
    const { api, clock } = this.ctx;
    const ns = er.metadata.namespace;
    const name = er.metadata.name as string;
    if (!pod.metadata.deletionTimestamp) {
      this.log('Deleting the ephemeral runner pod', name, { podId: pod.metadata.uid });
      try {
        api.delete(ACTOR, 'pods', ns, name);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    api.modify<EphemeralRunner>(
      ACTOR,
      ER,
      ns,
      name,
      (o) => {
        const status = (o.status ??= {});
        status.failures = {
          ...(status.failures ?? {}),
          [pod.metadata.uid as string]: this.arc.failureTimestamps ? isoTime(clock.now()) : true,
        };
        status.ready = false;
        if (pod.status?.reason) status.reason = pod.status.reason;
        else delete status.reason;
        if (pod.status?.message) status.message = pod.status.message;
        else delete status.message;
      },
      { subresource: 'status' },
    );
  }

  private updateRunStatusFromPod(er: EphemeralRunner, pod: Pod): void {
    const podPhase = pod.status?.phase;
    if (podPhase === 'Succeeded' || podPhase === 'Failed') return;
    // 0.15 (#4646): the listener owns `Running` (the runner took a job); an up pod is `Pending`.
    const phase =
      this.arc.runningMeansBusy && podPhase === 'Running'
        ? this.hasJob(er)
          ? 'Running'
          : 'Pending'
        : podPhase;
    const ready =
      this.arc.version === '0.9'
        ? er.status?.ready === true || phase === 'Running'
        : pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    if (er.status?.phase === phase && er.status?.ready === ready) return;
    this.ctx.api.modify<EphemeralRunner>(
      ACTOR,
      ER,
      er.metadata.namespace,
      er.metadata.name as string,
      (o) => {
        const status = (o.status ??= {});
        if (phase) status.phase = phase;
        status.ready = ready;
        if (pod.status?.reason) status.reason = pod.status.reason;
        if (pod.status?.message) status.message = pod.status.message;
      },
      { subresource: 'status' },
    );
  }

  /**
   * `cleanupResources`: deletes the runner pod and the JIT secret. Returns true when the caller
   * may go on: 0.13.1 once the deletes are issued (the pod may still be Terminating), 0.9.3 only
   * once both are gone (the pod first, then the secret).
   */
  private cleanupResources(er: EphemeralRunner): boolean {
    const { api } = this.ctx;
    const ns = er.metadata.namespace;
    const name = er.metadata.name as string;
    const issueOnly = this.arc.releaseFinalizerBeforePodGone;
    const remove = (resource: 'pods' | 'secrets') => {
      const obj = api.tryGet(resource, ns, name);
      if (!obj) return true;
      if (!obj.metadata.deletionTimestamp) {
        this.log(
          resource === 'pods' ? 'Deleting the runner pod' : 'Deleting the jitconfig secret',
          name,
        );
        try {
          api.delete(ACTOR, resource, ns, name);
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
      return issueOnly || !api.tryGet(resource, ns, name);
    };
    if (!remove('pods')) return false;
    return remove('secrets');
  }

  /** 0.15 RunnerUnregistrationQueue: RemoveRunner until it is not `busy`, every 30 s. */
  private deregisterInBackground(name: string, runnerId: number): void {
    const attempt = () => {
      const outcome = this.service.removeRunner(runnerId);
      if (outcome === 'busy') {
        this.log('Runner is still running the job. Re-queue in 30 seconds', name, { runnerId });
        this.ctx.clock.after(
          this.ctx.timings.registrationRetryMs,
          `arc deregister ${name}`,
          attempt,
        );
        return;
      }
      this.log('Successfully removed runner registration from service', name, { outcome });
    };
    attempt();
  }

  private finalize(er: EphemeralRunner): ReconcileResult | void {
    const ns = er.metadata.namespace;
    const name = er.metadata.name as string;
    const finalizers = er.metadata.finalizers ?? [];
    if (!finalizers.includes(ARC_FINALIZER)) return;
    if (finalizers.includes(ARC_REGISTRATION_FINALIZER) && this.arc.backgroundDeregistration) {
      // 0.15 (#4664): the finalizer goes first; RemoveRunner is retried in the background.
      removeFinalizer(this.ctx, ACTOR, ER, ns, name, ARC_REGISTRATION_FINALIZER);
      const runnerId = er.status?.runnerId;
      if (runnerId && er.status?.phase !== 'Succeeded') this.deregisterInBackground(name, runnerId);
    } else if (finalizers.includes(ARC_REGISTRATION_FINALIZER)) {
      if (
        !(this.arc.version === '0.9' && er.status?.phase === 'Succeeded') &&
        er.status?.runnerId
      ) {
        const outcome = this.service.removeRunner(er.status.runnerId);
        if (outcome === 'busy') {
          this.log('Runner is still running the job. Re-queue in 30 seconds', name, {
            runnerId: er.status.runnerId,
          });
          return { requeueAfterMs: this.ctx.timings.registrationRetryMs };
        }
        this.log('Successfully removed runner registration from service', name, { outcome });
      }
      removeFinalizer(this.ctx, ACTOR, ER, ns, name, ARC_REGISTRATION_FINALIZER);
      return;
    }
    this.log('Finalizing ephemeral runner', name);
    if (!this.cleanupResources(er)) {
      this.log('Waiting for ephemeral runner owned resources to be deleted', name);
      return;
    }
    this.log('Removing finalizer', name);
    removeFinalizer(this.ctx, ACTOR, ER, ns, name, ARC_FINALIZER);
  }
}

function runnerContainerStatus(pod: Pod): ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === 'runner');
}
