/**
 * The kubelets of every node, one facade over the concerns in the `kubelet-*` files: the pod
 * sync (admission, container start, the runner process, graceful termination on pod deletion),
 * the kubelet's own kills under node pressure and OOM, and the ways a node's kubelet stops.
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { StoreEvent } from '../api/store.js';
import { Reconciler } from '../reconciler.js';
import type { Pod } from '../types.js';
import { PodLifecycle } from './kubelet-pod-lifecycle.js';
import { NodePressure } from './kubelet-pressure.js';
import { NodeShutdown } from './kubelet-shutdown.js';
import { KubeletState } from './kubelet-state.js';
import type { ModelContext } from './model-context.js';
import type { EvictionSignal, PressureCondition } from './node-conditions.js';
import type { RunnerSettings } from './runner-behaviour.js';
import type { RunnerProcess } from './runner-process.js';
import { nsName, splitKey } from './work-queue.js';

export type { EvictionSignal, PressureCondition };

export interface KubeletHooks {
  /** A runner took a job (ARC's listener will send JobStarted). */
  jobStarted(namespace: string, scaleSetName: string, runnerName: string, job: JobAssignment): void;
  /** A node's kubelet stopped for good (the node lifecycle controller takes over). */
  nodeDown(nodeName: string): void;
}

export class Kubelets extends Reconciler {
  private readonly state: KubeletState;
  private readonly lifecycle: PodLifecycle;
  private readonly pressure: NodePressure;
  private readonly shutdown: NodeShutdown;
  private readonly unsubscribe: () => void;

  constructor(ctx: ModelContext, service: ActionsService, hooks: KubeletHooks) {
    super(ctx, 'kubelet');
    this.state = new KubeletState(ctx);
    this.lifecycle = new PodLifecycle(this.state, service, (ns, scaleSet, runner, job) =>
      hooks.jobStarted(ns, scaleSet, runner, job),
    );
    this.pressure = new NodePressure(this.state);
    this.shutdown = new NodeShutdown(this.state, (node) => hooks.nodeDown(node));
    this.unsubscribe = service.onJobFinished((runnerName) => {
      for (const rt of this.state.pods.values())
        if (splitKey(rt.key)[1] === runnerName) rt.process?.jobFinished();
    });
  }

  /** A pod bound to a node, or one the kubelet runs. */
  protected keysFor(event: StoreEvent): string[] {
    if (event.resource !== 'pods') return [];
    const meta = event.object.metadata;
    const key = nsName(meta.namespace, meta.name as string);
    return (event.object as Pod).spec.nodeName || this.state.pods.has(key) ? [key] : [];
  }

  reconcile(key: string): void {
    this.lifecycle.sync(key);
  }

  override stop(): void {
    super.stop();
    this.unsubscribe();
  }

  /** Runners whose image tag is below this version exit 0 at start (runner deprecation). */
  get minimumRunnerVersion(): string | undefined {
    return this.lifecycle.minimumRunnerVersion;
  }

  set minimumRunnerVersion(version: string | undefined) {
    this.lifecycle.minimumRunnerVersion = version;
  }

  register(nodeName: string): void {
    this.state.nodes.set(nodeName, {
      name: nodeName,
      up: true,
      shuttingDown: false,
      pressure: new Set(),
    });
  }

  isUp(nodeName: string): boolean {
    return this.state.isUp(nodeName);
  }

  /** SIGTERM handling (and graceful-stop timeout) for the runners of one scale set. */
  setRunnerSettings(namespace: string, scaleSet: string, settings: RunnerSettings): void {
    this.lifecycle.setRunnerSettings(namespace, scaleSet, settings);
  }

  runner(namespace: string, name: string): RunnerProcess | undefined {
    return this.state.pods.get(nsName(namespace, name))?.process;
  }

  podsOn(nodeName: string): Pod[] {
    return this.state.podsOn(nodeName);
  }

  /** Node-pressure (hard) eviction of one pod; see NodePressure.evict. */
  evict(ns: string, name: string, signal: EvictionSignal, pressureMs?: number): void {
    this.pressure.evict(ns, name, signal, pressureMs);
  }

  /** Rejection at admission under a pressure condition; see NodePressure.rejectAtAdmission. */
  rejectAtAdmission(
    ns: string,
    name: string,
    condition?: PressureCondition,
    pressureMs?: number,
  ): void {
    this.pressure.rejectAtAdmission(ns, name, condition, pressureMs);
  }

  setPressure(nodeName: string, condition: PressureCondition, on: boolean): void {
    this.pressure.setPressure(nodeName, condition, on);
  }

  /** SIGKILL of the runner container's process: exit 137, reason Error; restartPolicy Never → Failed. */
  sigkill(ns: string, name: string): void {
    this.kill(ns, name, 'Error', 'kill');
  }

  /** OOM kill of the runner container: exit 137, reason OOMKilled; restartPolicy Never → Failed. */
  oomKill(ns: string, name: string): void {
    this.kill(ns, name, 'OOMKilled', 'OOM-kill');
  }

  private kill(ns: string, name: string, reason: string, verb: string): void {
    const { rt } = this.state.runtime(ns, name);
    if (!rt?.process) throw new Error(`pod ${ns}/${name} has no running runner process to ${verb}`);
    rt.process.kill(137, reason);
  }

  /** Graceful node shutdown: pods get Failed/Terminated and SIGTERM; then the kubelet stops. */
  gracefulShutdown(nodeName: string, shutdownGracePeriodMs?: number): void {
    this.shutdown.gracefulShutdown(nodeName, shutdownGracePeriodMs);
  }

  /** The machine is gone (power off, instance terminated): processes vanish, nothing is reported. */
  nodeDown(nodeName: string): void {
    this.shutdown.nodeDown(nodeName);
  }

  /** The kubelet stops posting status while the machine runs on; see NodeShutdown.stopReporting. */
  stopReporting(nodeName: string, runners?: 'keep-running' | 'lose-network'): void {
    this.shutdown.stopReporting(nodeName, runners);
  }
}
