/**
 * A kubelet's pod sync: admission (rejected under node pressure or shutdown), container start
 * and the runner process in the `runner` container, the containers' exit, and graceful
 * termination when the pod is deleted (SIGTERM, SIGKILL at the deletion deadline).
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { Node, Pod } from '../types.js';
import { type KubeletState, type NodeAgent, type PodRuntime } from './kubelet-state.js';
import {
  allTerminated,
  isTerminal,
  markAdmitted,
  markRunning,
  notReady,
  settlePhase,
  terminate,
} from './pod-status.js';
import { runnerBehaviourFor, type RunnerSettings } from './runner-behaviour.js';
import { RunnerProcess } from './runner-process.js';
import { nsName, splitKey } from './work-queue.js';

interface Rejection {
  reason: string;
  message: string;
  event: string;
}

export class PodLifecycle {
  /** Runners whose image tag is below this version exit 0 at start (runner deprecation). */
  minimumRunnerVersion: string | undefined;
  private readonly runnerSettings = new Map<string, RunnerSettings>();

  constructor(
    private readonly state: KubeletState,
    private readonly service: ActionsService,
    /** A runner took a job (ARC's listener will send JobStarted). */
    private readonly jobStarted: (
      ns: string,
      scaleSet: string,
      runner: string,
      job: JobAssignment,
    ) => void,
  ) {}

  setRunnerSettings(namespace: string, scaleSet: string, settings: RunnerSettings): void {
    this.runnerSettings.set(`${namespace}/${scaleSet}`, { ...settings });
  }

  sync(key: string): void {
    const { state } = this;
    const [ns, name] = splitKey(key);
    const pod = state.ctx.api.tryGet<Pod>('pods', ns, name);
    let rt = state.pods.get(key);
    if (rt && (!pod || pod.metadata.uid !== rt.uid)) {
      // Deleted (forcefully, or by PodGC) or replaced under the same name.
      if (state.isUp(rt.node)) rt.process?.sigterm();
      state.drop(rt);
      rt = undefined;
    }
    if (!pod?.spec.nodeName) return;
    const agent = state.nodes.get(pod.spec.nodeName);
    if (!agent?.up) return;

    if (pod.metadata.deletionTimestamp) return this.terminatePod(pod, rt);
    if (isTerminal(pod)) return;
    if (rt) return;

    const rejection = admissionFailure(agent, pod);
    if (rejection) return state.reject(pod, rejection.reason, rejection.message, rejection.event);
    this.admit(pod, agent);
  }

  private admit(pod: Pod, agent: NodeAgent): void {
    const { ctx } = this.state;
    const key = nsName(pod.metadata.namespace, pod.metadata.name as string);
    const rt: PodRuntime = {
      key,
      uid: pod.metadata.uid as string,
      node: agent.name,
      started: false,
      terminating: false,
    };
    this.state.pods.set(key, rt);
    const now = ctx.clock.now();
    const node = ctx.api.tryGet<Node>('nodes', undefined, agent.name);
    const hostIP =
      node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
    const { rng } = ctx;
    this.state.writeStatus(pod.metadata.namespace, pod.metadata.name as string, (p) =>
      markAdmitted(p, now, hostIP, `10.${1 + rng.int(250)}.${rng.int(256)}.${1 + rng.int(250)}`),
    );
    rt.startTimer = ctx.clock.after(ctx.timings.containerStartMs, `kubelet start ${key}`, () =>
      this.startContainers(rt),
    );
  }

  /** The pod of `rt` as it is now, unless it went, was replaced or its kubelet stopped. */
  private livePod(rt: PodRuntime): Pod | undefined {
    const [ns, name] = splitKey(rt.key);
    const pod = this.state.ctx.api.tryGet<Pod>('pods', ns, name);
    if (!pod || pod.metadata.uid !== rt.uid || !this.state.isUp(rt.node)) return undefined;
    return pod;
  }

  private startContainers(rt: PodRuntime): void {
    const pod = this.livePod(rt);
    if (!pod || pod.metadata.deletionTimestamp || isTerminal(pod)) return;
    const now = this.state.ctx.clock.now();
    rt.started = true;
    this.state.writeStatus(pod.metadata.namespace, pod.metadata.name as string, (p) =>
      markRunning(p, now),
    );
    for (const c of pod.spec.containers) {
      const fieldPath = `spec.containers{${c.name}}`;
      const image = c.image ?? '';
      for (const [reason, message] of [
        ['Pulled', `Container image "${image}" already present on machine`],
        ['Created', `Created container: ${c.name}`],
        ['Started', `Started container ${c.name}`],
      ] as const)
        this.state.record(pod, rt.node, { type: 'Normal', reason, message, fieldPath });
    }
    if (pod.spec.containers.some((c) => c.name === 'runner')) this.startRunner(pod, rt);
  }

  private startRunner(pod: Pod, rt: PodRuntime): void {
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name as string;
    const scaleSet = pod.metadata.labels?.['actions.github.com/scale-set-name'];
    const behaviour = runnerBehaviourFor(
      pod,
      scaleSet ? this.runnerSettings.get(`${ns}/${scaleSet}`) : undefined,
      this.minimumRunnerVersion,
    );
    rt.process = new RunnerProcess(
      this.state.ctx,
      this.service,
      name,
      {
        online: () => undefined,
        jobStarted: (job) => {
          if (scaleSet) this.jobStarted(ns as string, scaleSet, name, job);
        },
        exited: (code, reason) => this.containerExited(rt, code, reason),
      },
      behaviour,
    );
  }

  /** The runner container stopped: record it, settle the phase, finish a pending deletion. */
  private containerExited(rt: PodRuntime, exitCode: number, reason: string): void {
    const pod = this.livePod(rt);
    if (!pod) return;
    const now = this.state.ctx.clock.now();
    const deleting = !!pod.metadata.deletionTimestamp;
    this.state.writeStatus(pod.metadata.namespace, pod.metadata.name as string, (p) => {
      terminate(p, now, exitCode, reason, deleting || rt.onStop ? undefined : 'runner');
      notReady(p, now, exitCode === 0 ? 'PodCompleted' : 'PodFailed');
      if (rt.onStop) rt.onStop(p);
      else settlePhase(p);
    });
    if (deleting) this.state.finishDeletion(pod);
  }

  private terminatePod(pod: Pod, rt: PodRuntime | undefined): void {
    const { ctx } = this.state;
    if (!rt || !rt.started || !rt.process || rt.process.state === 'exited') {
      if (rt?.started && !isTerminal(pod) && !allTerminated(pod)) {
        const now = ctx.clock.now();
        this.state.writeStatus(pod.metadata.namespace, pod.metadata.name as string, (p) => {
          terminate(p, now, 137, 'Error');
          notReady(p, now);
        });
      }
      return this.state.finishDeletion(pod);
    }
    if (rt.terminating) return;
    rt.terminating = true;
    ctx.clock.cancel(rt.startTimer);
    ctx.log('kubelet', 'Killing container with a grace period', {
      pod: rt.key,
      gracePeriod: pod.metadata.deletionGracePeriodSeconds,
    });
    for (const c of pod.spec.containers)
      this.state.record(pod, rt.node, {
        type: 'Normal',
        reason: 'Killing',
        message: `Stopping container ${c.name}`,
        fieldPath: `spec.containers{${c.name}}`,
      });
    rt.process.sigterm();
    const deadline = Date.parse(pod.metadata.deletionTimestamp as string);
    rt.killTimer = ctx.clock.at(
      Math.max(deadline, ctx.clock.now()),
      `kubelet SIGKILL ${rt.key}`,
      () => rt.process?.kill(),
    );
  }
}

/** Why the kubelet refuses a pod: its node is shutting down or under a pressure the pod's QoS does not ride out. */
function admissionFailure(agent: NodeAgent, pod: Pod): Rejection | undefined {
  if (agent.shuttingDown)
    return {
      reason: 'NodeShutdown',
      message: 'Pod was rejected as the node is shutting down.',
      event: 'Pod was rejected as the node is shutting down.',
    };
  const bestEffort = (pod.status?.qosClass ?? 'BestEffort') === 'BestEffort';
  const blocking = [...agent.pressure].filter((c) => c !== 'MemoryPressure' || bestEffort);
  if (blocking.length === 0) return undefined;
  const msg = `The node had condition: [${blocking.join(', ')}]. `;
  return { reason: 'Evicted', message: `Pod was rejected: ${msg}`, event: msg };
}
