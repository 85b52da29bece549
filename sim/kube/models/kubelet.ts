/**
 * The kubelets of every node: admission (including rejection under node pressure or shutdown),
 * container start, the runner process, graceful termination on pod deletion, and the kubelet's
 * own ways of killing pods: node-pressure eviction, graceful node shutdown and OOM kills.
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { TimerHandle } from '../../clock.js';
import { ApiError } from '../api/errors.js';
import { setCondition } from '../api/kube-api.js';
import { isoTime, type Node, type Pod } from '../types.js';
import type { ModelContext } from './model-context.js';
import {
  allTerminated,
  isTerminal,
  notReady,
  runningStatuses,
  terminate,
  waitingStatuses,
} from './pod-status.js';
import {
  EVICTION_SIGNALS,
  evictionMessage,
  pressureShape,
  type EvictionSignal,
  type PressureCondition,
} from './node-conditions.js';
import { RunnerProcess, type RunnerBehaviour, type SigtermBehaviour } from './runner-process.js';
import { nsName, splitKey, WorkQueue } from './work-queue.js';

const ACTOR = 'kubelet';

export type { EvictionSignal, PressureCondition };

interface NodeAgent {
  name: string;
  /** The kubelet is running and posting status. */
  up: boolean;
  shuttingDown: boolean;
  pressure: Set<PressureCondition>;
}

interface PodRuntime {
  key: string;
  uid: string;
  node: string;
  startTimer?: TimerHandle;
  killTimer?: TimerHandle;
  started: boolean;
  process?: RunnerProcess;
  terminating: boolean;
  /** Status the kubelet should write when the containers stop (eviction, shutdown). */
  onStop?: (pod: Pod) => void;
}

export interface KubeletHooks {
  /** A runner took a job (ARC's listener will send JobStarted). */
  jobStarted(namespace: string, scaleSetName: string, runnerName: string, job: JobAssignment): void;
  /** A node's kubelet stopped for good (the node lifecycle controller takes over). */
  nodeDown(nodeName: string): void;
}

/** Per scale set runner settings (`<namespace>/<scale set>`), over what the pod spec says. */
export interface RunnerSettings {
  onSigterm?: SigtermBehaviour;
  stopTimeoutSeconds?: number;
}

/** `2.328.0` < `2.329.0`; a tag that is not a version (`latest`) is never below. */
export function versionBelow(version: string | undefined, minimum: string | undefined): boolean {
  if (!version || !minimum) return false;
  const parse = (v: string) => /^v?(\d+)\.(\d+)\.(\d+)$/.exec(v)?.slice(1).map(Number);
  const a = parse(version);
  const b = parse(minimum);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++)
    if ((a[i] as number) !== (b[i] as number)) return (a[i] as number) < (b[i] as number);
  return false;
}

/**
 * How a pod's runner behaves: explicit per-scale-set settings first, else what its spec says
 * (a `graceful-stop.sh` command or argument selects graceful-stop, its RUNNER_GRACEFUL_STOP_TIMEOUT
 * env the timeout), else the runner's own handling. The image tag is the runner version.
 */
export function runnerBehaviourFor(
  pod: Pod,
  settings: RunnerSettings | undefined,
  minimumRunnerVersion: string | undefined,
): RunnerBehaviour {
  const runner = pod.spec.containers.find((c) => c.name === 'runner');
  const words = [...(runner?.command ?? []), ...(runner?.args ?? [])].join(' ');
  const fromSpec: SigtermBehaviour = /graceful-stop/.test(words) ? 'graceful-stop' : 'default';
  const envTimeout = runner?.env?.find((e) => e.name === 'RUNNER_GRACEFUL_STOP_TIMEOUT')?.value;
  const seconds =
    settings?.stopTimeoutSeconds ?? (envTimeout !== undefined ? Number(envTimeout) : undefined);
  const tag = typeof runner?.image === 'string' ? runner.image.split(':')[1] : undefined;
  return {
    onSigterm: settings?.onSigterm ?? fromSpec,
    ...(seconds !== undefined && Number.isFinite(seconds) ? { stopTimeoutMs: seconds * 1000 } : {}),
    ...(versionBelow(tag, minimumRunnerVersion) ? { deprecated: true } : {}),
  };
}

export class Kubelets {
  /** Runners whose image tag is below this version exit 0 at start (runner deprecation). */
  minimumRunnerVersion: string | undefined;
  private readonly runnerSettings = new Map<string, RunnerSettings>();
  private readonly nodes = new Map<string, NodeAgent>();
  private readonly pods = new Map<string, PodRuntime>();
  private readonly pressureTimers = new Map<string, TimerHandle>();
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: ModelContext,
    private readonly service: ActionsService,
    private readonly hooks: KubeletHooks,
  ) {
    this.queue = new WorkQueue(
      ctx.clock,
      'kubelet',
      ctx.timings.controllerLatencyMs,
      (k) => this.sync(k),
      ctx.errors,
    );
    ctx.api.store.subscribe((ev) => {
      if (ev.resource !== 'pods') return;
      const key = nsName(ev.object.metadata.namespace, ev.object.metadata.name as string);
      if ((ev.object as Pod).spec.nodeName || this.pods.has(key)) this.queue.add(key);
    });
    this.unsubscribe = service.onJobFinished((runnerName) => {
      for (const rt of this.pods.values())
        if (splitKey(rt.key)[1] === runnerName) rt.process?.jobFinished();
    });
  }

  stop(): void {
    this.queue.stop();
    this.unsubscribe();
  }

  register(nodeName: string): void {
    this.nodes.set(nodeName, {
      name: nodeName,
      up: true,
      shuttingDown: false,
      pressure: new Set(),
    });
  }

  isUp(nodeName: string): boolean {
    return this.nodes.get(nodeName)?.up === true;
  }

  /** SIGTERM handling (and graceful-stop timeout) for the runners of one scale set. */
  setRunnerSettings(namespace: string, scaleSet: string, settings: RunnerSettings): void {
    this.runnerSettings.set(`${namespace}/${scaleSet}`, { ...settings });
  }

  runner(namespace: string, name: string): RunnerProcess | undefined {
    return this.pods.get(nsName(namespace, name))?.process;
  }

  // ---- pod sync ---------------------------------------------------------------------------

  private sync(key: string): void {
    const [ns, name] = splitKey(key);
    const { api } = this.ctx;
    const pod = api.tryGet<Pod>('pods', ns, name);
    let rt = this.pods.get(key);
    if (rt && (!pod || pod.metadata.uid !== rt.uid)) {
      // Deleted (forcefully, or by PodGC) or replaced under the same name.
      if (this.isUp(rt.node)) rt.process?.sigterm();
      this.drop(rt);
      rt = undefined;
    }
    if (!pod?.spec.nodeName) return;
    const agent = this.nodes.get(pod.spec.nodeName);
    if (!agent?.up) return;

    if (pod.metadata.deletionTimestamp) return this.terminatePod(pod, rt);
    if (isTerminal(pod)) return;
    if (rt) return;

    const rejection = this.admissionFailure(agent, pod);
    if (rejection) return this.reject(pod, rejection.reason, rejection.message, rejection.event);
    this.admit(pod, agent);
  }

  private admissionFailure(
    agent: NodeAgent,
    pod: Pod,
  ): { reason: string; message: string; event: string } | undefined {
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

  private reject(pod: Pod, reason: string, message: string, eventMessage: string): void {
    const { api, clock } = this.ctx;
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name as string;
    api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => {
        const status = (p.status ??= {});
        status.phase = 'Failed';
        status.reason = reason;
        status.message = message;
        status.startTime ??= isoTime(clock.now());
      },
      { subresource: 'status' },
    );
    this.ctx.events.record(
      pod,
      {
        type: 'Warning',
        reason: reason === 'Evicted' ? 'Evicted' : reason,
        message: eventMessage,
        component: 'kubelet',
        host: pod.spec.nodeName,
      },
      ACTOR,
    );
    this.ctx.log('kubelet', 'Pod rejected at admission', {
      pod: `${ns}/${name}`,
      node: pod.spec.nodeName,
      reason,
      message,
    });
  }

  private admit(pod: Pod, agent: NodeAgent): void {
    const { api, clock, timings } = this.ctx;
    const key = nsName(pod.metadata.namespace, pod.metadata.name as string);
    const rt: PodRuntime = {
      key,
      uid: pod.metadata.uid as string,
      node: agent.name,
      started: false,
      terminating: false,
    };
    this.pods.set(key, rt);
    const now = clock.now();
    const node = api.tryGet<Node>('nodes', undefined, agent.name);
    const hostIP =
      node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '10.0.0.1';
    api.modify<Pod>(
      ACTOR,
      'pods',
      pod.metadata.namespace,
      pod.metadata.name as string,
      (p) => {
        const status = (p.status ??= {});
        status.phase = 'Pending';
        status.startTime = isoTime(now);
        status.hostIP = hostIP;
        status.podIP = `10.${1 + this.ctx.rng.int(250)}.${this.ctx.rng.int(256)}.${1 + this.ctx.rng.int(250)}`;
        setCondition(p, { type: 'PodReadyToStartContainers', status: 'True' }, now);
        setCondition(p, { type: 'Initialized', status: 'True' }, now);
        setCondition(
          p,
          {
            type: 'Ready',
            status: 'False',
            reason: 'ContainersNotReady',
            message: `containers with unready status: [${p.spec.containers.map((c) => c.name).join(' ')}]`,
          },
          now,
        );
        setCondition(
          p,
          {
            type: 'ContainersReady',
            status: 'False',
            reason: 'ContainersNotReady',
            message: `containers with unready status: [${p.spec.containers.map((c) => c.name).join(' ')}]`,
          },
          now,
        );
        status.containerStatuses = waitingStatuses(p);
      },
      { subresource: 'status' },
    );
    rt.startTimer = clock.after(timings.containerStartMs, `kubelet start ${key}`, () =>
      this.startContainers(rt),
    );
  }

  private startContainers(rt: PodRuntime): void {
    const { api, clock } = this.ctx;
    const [ns, name] = splitKey(rt.key);
    const pod = api.tryGet<Pod>('pods', ns, name);
    if (
      !pod ||
      pod.metadata.uid !== rt.uid ||
      pod.metadata.deletionTimestamp ||
      isTerminal(pod) ||
      !this.isUp(rt.node)
    )
      return;
    const now = clock.now();
    rt.started = true;
    api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => {
        const status = (p.status ??= {});
        status.phase = 'Running';
        status.containerStatuses = runningStatuses(p, now);
        setCondition(p, { type: 'ContainersReady', status: 'True' }, now);
        setCondition(p, { type: 'Ready', status: 'True' }, now);
      },
      { subresource: 'status' },
    );
    for (const c of pod.spec.containers) {
      const fieldPath = `spec.containers{${c.name}}`;
      const host = rt.node;
      this.ctx.events.record(
        pod,
        {
          type: 'Normal',
          reason: 'Pulled',
          message: `Container image "${c.image ?? ''}" already present on machine`,
          component: 'kubelet',
          host,
          fieldPath,
        },
        ACTOR,
      );
      this.ctx.events.record(
        pod,
        {
          type: 'Normal',
          reason: 'Created',
          message: `Created container: ${c.name}`,
          component: 'kubelet',
          host,
          fieldPath,
        },
        ACTOR,
      );
      this.ctx.events.record(
        pod,
        {
          type: 'Normal',
          reason: 'Started',
          message: `Started container ${c.name}`,
          component: 'kubelet',
          host,
          fieldPath,
        },
        ACTOR,
      );
    }
    if (!pod.spec.containers.some((c) => c.name === 'runner')) return;
    const scaleSet = pod.metadata.labels?.['actions.github.com/scale-set-name'];
    const behaviour = runnerBehaviourFor(
      pod,
      scaleSet ? this.runnerSettings.get(`${ns}/${scaleSet}`) : undefined,
      this.minimumRunnerVersion,
    );
    rt.process = new RunnerProcess(
      this.ctx,
      this.service,
      name,
      {
        online: () => undefined,
        jobStarted: (job) => {
          if (scaleSet) this.hooks.jobStarted(ns as string, scaleSet, name, job);
        },
        exited: (code, reason) => this.containerExited(rt, code, reason),
      },
      behaviour,
    );
  }

  /** The runner container stopped: record it, settle the phase, finish a pending deletion. */
  private containerExited(rt: PodRuntime, exitCode: number, reason: string): void {
    const { api, clock } = this.ctx;
    const [ns, name] = splitKey(rt.key);
    const pod = api.tryGet<Pod>('pods', ns, name);
    if (!pod || pod.metadata.uid !== rt.uid || !this.isUp(rt.node)) return;
    const now = clock.now();
    const deleting = !!pod.metadata.deletionTimestamp;
    api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => {
        terminate(p, now, exitCode, reason, deleting || rt.onStop ? undefined : 'runner');
        notReady(p, now, exitCode === 0 ? 'PodCompleted' : 'PodFailed');
        if (rt.onStop) rt.onStop(p);
        else if (allTerminated(p) || p.spec.containers.length === 1) {
          const codes = (p.status?.containerStatuses ?? []).map(
            (c) => c.state.terminated?.exitCode ?? 0,
          );
          (p.status as { phase: string }).phase = codes.every((c) => c === 0)
            ? 'Succeeded'
            : 'Failed';
        }
      },
      { subresource: 'status' },
    );
    if (deleting) this.finishDeletion(pod);
  }

  private terminatePod(pod: Pod, rt: PodRuntime | undefined): void {
    if (!rt || !rt.started || !rt.process || rt.process.state === 'exited') {
      if (rt?.started && !isTerminal(pod) && !allTerminated(pod)) {
        const now = this.ctx.clock.now();
        this.ctx.api.modify<Pod>(
          ACTOR,
          'pods',
          pod.metadata.namespace,
          pod.metadata.name as string,
          (p) => {
            terminate(p, now, 137, 'Error');
            notReady(p, now);
          },
          { subresource: 'status' },
        );
      }
      return this.finishDeletion(pod);
    }
    if (rt.terminating) return;
    rt.terminating = true;
    this.ctx.clock.cancel(rt.startTimer);
    this.ctx.log('kubelet', 'Killing container with a grace period', {
      pod: rt.key,
      gracePeriod: pod.metadata.deletionGracePeriodSeconds,
    });
    for (const c of pod.spec.containers) {
      this.ctx.events.record(
        pod,
        {
          type: 'Normal',
          reason: 'Killing',
          message: `Stopping container ${c.name}`,
          component: 'kubelet',
          host: rt.node,
          fieldPath: `spec.containers{${c.name}}`,
        },
        ACTOR,
      );
    }
    rt.process.sigterm();
    const deadline = Date.parse(pod.metadata.deletionTimestamp as string);
    rt.killTimer = this.ctx.clock.at(
      Math.max(deadline, this.ctx.clock.now()),
      `kubelet SIGKILL ${rt.key}`,
      () => rt.process?.kill(),
    );
  }

  private finishDeletion(pod: Pod): void {
    const key = nsName(pod.metadata.namespace, pod.metadata.name as string);
    const rt = this.pods.get(key);
    if (rt) this.drop(rt);
    try {
      this.ctx.api.delete(ACTOR, 'pods', pod.metadata.namespace, pod.metadata.name as string, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      });
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  private drop(rt: PodRuntime): void {
    this.ctx.clock.cancel(rt.startTimer);
    this.ctx.clock.cancel(rt.killTimer);
    this.pods.delete(rt.key);
  }

  // ---- faults -----------------------------------------------------------------------------

  private runtime(ns: string, name: string): { pod: Pod; rt: PodRuntime | undefined } {
    const pod = this.ctx.api.get('pods', ns, name) as Pod;
    return { pod, rt: this.pods.get(nsName(ns, name)) };
  }

  /**
   * Node-pressure (hard) eviction of one pod: killed at once, Failed/Evicted, Warning event.
   * The node reports the pressure condition (and its NoSchedule taint) for `pressureMs`
   * (the kubelet's eviction-pressure-transition-period, 5 min by default; 0 = not at all).
   */
  evict(ns: string, name: string, signal: EvictionSignal, pressureMs = 5 * 60_000): void {
    const { pod, rt } = this.runtime(ns, name);
    const s = EVICTION_SIGNALS[signal];
    const node = pod.spec.nodeName as string;
    this.pressureFor(node, s.condition, pressureMs);
    const runner = pod.spec.containers.find((c) => c.name === 'runner') ?? pod.spec.containers[0];
    const message = evictionMessage(signal, runner?.name);
    const now = this.ctx.clock.now();
    const apply = (p: Pod) => {
      const status = (p.status ??= {});
      status.phase = 'Failed';
      status.reason = 'Evicted';
      status.message = message;
      setCondition(
        p,
        { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message },
        now,
      );
      notReady(p, now);
    };
    this.ctx.events.record(
      pod,
      {
        type: 'Warning',
        reason: 'Evicted',
        message,
        component: 'kubelet',
        host: node,
        ...(s.usage && runner
          ? {
              annotations: {
                offending_containers: runner.name,
                offending_containers_usage: s.usage,
                starved_resource: s.resource,
              },
            }
          : {}),
      },
      ACTOR,
    );
    this.stopWith(pod, rt, apply, () => rt?.process?.kill(137, 'Error'));
  }

  /** Sets a pressure condition for `ms`, then clears it (0 = leave the node alone). */
  private pressureFor(node: string, condition: PressureCondition, ms: number): void {
    if (ms <= 0) return;
    this.setPressure(node, condition, true);
    const key = `${node}|${condition}`;
    this.ctx.clock.cancel(this.pressureTimers.get(key));
    this.pressureTimers.set(
      key,
      this.ctx.clock.after(ms, `pressure ends ${key}`, () => {
        this.pressureTimers.delete(key);
        if (this.nodes.has(node) && this.ctx.api.tryGet('nodes', undefined, node))
          this.setPressure(node, condition, false);
      }),
    );
  }

  /**
   * Admission rejection (`Pod was rejected: The node had condition: [DiskPressure]. `): the pod
   * landed on the node just before its pressure taint. The node keeps the condition for
   * `pressureMs` (default 5 min; 0 = none).
   */
  rejectAtAdmission(
    ns: string,
    name: string,
    condition: PressureCondition = 'DiskPressure',
    pressureMs = 5 * 60_000,
  ): void {
    const { pod, rt } = this.runtime(ns, name);
    if (pod.spec.nodeName) this.pressureFor(pod.spec.nodeName, condition, pressureMs);
    if (rt) {
      rt.process?.kill();
      this.drop(rt);
    }
    const msg = `The node had condition: [${condition}]. `;
    this.reject(pod, 'Evicted', `Pod was rejected: ${msg}`, msg);
    // A rejected pod never ran: no container statuses (what ARC <= 0.11 waits on forever).
    this.ctx.api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => {
        if (!rt?.started && p.status) delete p.status.containerStatuses;
      },
      { subresource: 'status' },
    );
  }

  /** SIGKILL of the runner container's process: exit 137, reason Error; restartPolicy Never → Failed. */
  sigkill(ns: string, name: string): void {
    const { rt } = this.runtime(ns, name);
    if (!rt?.process) throw new Error(`pod ${ns}/${name} has no running runner process to kill`);
    rt.process.kill(137, 'Error');
  }

  /** OOM kill of the runner container: exit 137, reason OOMKilled; restartPolicy Never → Failed. */
  oomKill(ns: string, name: string): void {
    const { rt } = this.runtime(ns, name);
    if (!rt?.process)
      throw new Error(`pod ${ns}/${name} has no running runner process to OOM-kill`);
    rt.process.kill(137, 'OOMKilled');
  }

  /** Graceful node shutdown: pods get Failed/Terminated and SIGTERM; then the kubelet stops. */
  gracefulShutdown(nodeName: string, shutdownGracePeriodMs = 30_000): void {
    const agent = this.nodes.get(nodeName);
    if (!agent?.up) throw new Error(`node ${nodeName} is not running`);
    agent.shuttingDown = true;
    const now = this.ctx.clock.now();
    const message = 'Pod was terminated in response to imminent node shutdown.';
    this.ctx.api.modify<Node>(
      ACTOR,
      'nodes',
      undefined,
      nodeName,
      (n) => {
        setCondition(
          n,
          {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message: 'node is shutting down',
          },
          now,
        );
      },
      { subresource: 'status' },
    );
    for (const pod of this.podsOn(nodeName)) {
      if (isTerminal(pod)) continue;
      const rt = this.pods.get(nsName(pod.metadata.namespace, pod.metadata.name as string));
      this.stopWith(
        pod,
        rt,
        (p) => {
          const status = (p.status ??= {});
          status.phase = 'Failed';
          status.reason = 'Terminated';
          status.message = message;
          setCondition(
            p,
            { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message },
            this.ctx.clock.now(),
          );
          notReady(p, this.ctx.clock.now());
        },
        () => rt?.process?.sigterm(),
      );
    }
    this.ctx.clock.after(shutdownGracePeriodMs, `node ${nodeName} powers off`, () =>
      this.nodeDown(nodeName),
    );
  }

  /** The machine is gone (power off, instance terminated): processes vanish, nothing is reported. */
  nodeDown(nodeName: string): void {
    const agent = this.nodes.get(nodeName);
    if (!agent?.up) return;
    agent.up = false;
    for (const rt of [...this.pods.values()]) {
      if (rt.node !== nodeName) continue;
      rt.process?.vanish();
      this.drop(rt);
    }
    this.hooks.nodeDown(nodeName);
  }

  /**
   * The kubelet stops posting status (it crashed, or its node lost the control plane) while the
   * machine runs on: containers keep running and their runners keep working their jobs, but
   * nothing about them reaches the API (the node goes Ready=Unknown after the node-monitor grace
   * period; its pods stay `Running`). With `runners: 'lose-network'` the runners lose GitHub too
   * (a hard loss for busy ones).
   */
  stopReporting(nodeName: string, runners: 'keep-running' | 'lose-network' = 'keep-running'): void {
    const agent = this.nodes.get(nodeName);
    if (!agent?.up) return;
    agent.up = false;
    this.ctx.log('kubelet', 'Kubelet stopped posting node status', { node: nodeName, runners });
    if (runners === 'lose-network')
      for (const rt of this.pods.values()) if (rt.node === nodeName) rt.process?.vanish();
    this.hooks.nodeDown(nodeName);
  }

  setPressure(nodeName: string, condition: PressureCondition, on: boolean): void {
    const agent = this.nodes.get(nodeName);
    if (!agent) throw new Error(`unknown node ${nodeName}`);
    if (on) agent.pressure.add(condition);
    else agent.pressure.delete(condition);
    const now = this.ctx.clock.now();
    const shape = pressureShape(condition, on);
    const node = this.ctx.api.tryGet<Node>('nodes', undefined, nodeName);
    if (node) {
      const message = `Node ${nodeName} status is now: ${shape.event}`;
      this.ctx.events.record(
        node,
        { type: 'Normal', reason: shape.event, message, component: 'kubelet', host: nodeName },
        ACTOR,
      );
    }
    this.ctx.api.modify<Node>(
      ACTOR,
      'nodes',
      undefined,
      nodeName,
      (n) =>
        setCondition(
          n,
          {
            type: condition,
            status: on ? 'True' : 'False',
            reason: shape.reason,
            message: shape.message,
          },
          now,
        ),
      { subresource: 'status' },
    );
    this.ctx.api.modify<Node>('node-lifecycle-controller', 'nodes', undefined, nodeName, (n) => {
      const taints = (n.spec.taints ?? []).filter((t) => t.key !== shape.taint);
      if (on) taints.push({ key: shape.taint, effect: 'NoSchedule', timeAdded: isoTime(now) });
      n.spec.taints = taints;
      if (taints.length === 0) delete n.spec.taints;
    });
  }

  podsOn(nodeName: string): Pod[] {
    return this.ctx.api.all<Pod>('pods').filter((p) => p.spec.nodeName === nodeName);
  }

  /** Writes the kubelet's terminal status now (containers killed) or when the process exits. */
  private stopWith(
    pod: Pod,
    rt: PodRuntime | undefined,
    apply: (p: Pod) => void,
    signal: () => void,
  ): void {
    const ns = pod.metadata.namespace;
    const name = pod.metadata.name as string;
    if (rt?.process && rt.process.state !== 'exited') {
      rt.onStop = apply;
      signal();
      return;
    }
    if (rt) this.drop(rt);
    const now = this.ctx.clock.now();
    this.ctx.api.modify<Pod>(
      ACTOR,
      'pods',
      ns,
      name,
      (p) => {
        if (rt?.started) terminate(p, now, 137, 'Error');
        apply(p);
      },
      { subresource: 'status' },
    );
  }
}
