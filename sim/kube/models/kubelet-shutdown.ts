/**
 * How a node's kubelet stops: graceful node shutdown (pods Failed/Terminated, SIGTERM, then the
 * machine powers off), the machine vanishing at once, or the kubelet going silent while the
 * machine and its containers run on.
 */
import { setCondition } from '../api/kube-api.js';
import type { Node } from '../types.js';
import { KUBELET, type KubeletState } from './kubelet-state.js';
import { isTerminal, markKilledByKubelet } from './pod-status.js';
import { nsName } from './work-queue.js';

export class NodeShutdown {
  constructor(
    private readonly state: KubeletState,
    /** A node's kubelet stopped for good (the node lifecycle controller takes over). */
    private readonly stopped: (nodeName: string) => void,
  ) {}

  /** Graceful node shutdown: pods get Failed/Terminated and SIGTERM; then the kubelet stops. */
  gracefulShutdown(nodeName: string, shutdownGracePeriodMs = 30_000): void {
    const { state } = this;
    const { api, clock } = state.ctx;
    const agent = state.nodes.get(nodeName);
    if (!agent?.up) throw new Error(`node ${nodeName} is not running`);
    agent.shuttingDown = true;
    const now = clock.now();
    const message = 'Pod was terminated in response to imminent node shutdown.';
    api.modify<Node>(
      KUBELET,
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
    for (const pod of state.podsOn(nodeName)) {
      if (isTerminal(pod)) continue;
      const rt = state.pods.get(nsName(pod.metadata.namespace, pod.metadata.name as string));
      state.stopWith(
        pod,
        rt,
        (p) => markKilledByKubelet(p, 'Terminated', message, clock.now()),
        () => rt?.process?.sigterm(),
      );
    }
    clock.after(shutdownGracePeriodMs, `node ${nodeName} powers off`, () =>
      this.nodeDown(nodeName),
    );
  }

  /** The machine is gone (power off, instance terminated): processes vanish, nothing is reported. */
  nodeDown(nodeName: string): void {
    const agent = this.state.nodes.get(nodeName);
    if (!agent?.up) return;
    agent.up = false;
    for (const rt of [...this.state.pods.values()]) {
      if (rt.node !== nodeName) continue;
      rt.process?.vanish();
      this.state.drop(rt);
    }
    this.stopped(nodeName);
  }

  /**
   * The kubelet stops posting status (it crashed, or its node lost the control plane) while the
   * machine runs on: containers keep running and their runners keep working their jobs, but
   * nothing about them reaches the API (the node goes Ready=Unknown after the node-monitor grace
   * period; its pods stay `Running`). With `runners: 'lose-network'` the runners lose GitHub too
   * (a hard loss for busy ones).
   */
  stopReporting(nodeName: string, runners: 'keep-running' | 'lose-network' = 'keep-running'): void {
    const agent = this.state.nodes.get(nodeName);
    if (!agent?.up) return;
    agent.up = false;
    this.state.ctx.log('kubelet', 'Kubelet stopped posting node status', {
      node: nodeName,
      runners,
    });
    if (runners === 'lose-network')
      for (const rt of this.state.pods.values()) if (rt.node === nodeName) rt.process?.vanish();
    this.stopped(nodeName);
  }
}
