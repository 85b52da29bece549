/**
 * The three typical events of the `scale` benchmark and the per-event cost tests, measured from
 * the twins' request logs and dynalite's answers: a kubelet eviction of one runner's pod, one
 * `workflow_job.completed` webhook, and one EC2 spot interruption warning.
 */
import { performance } from 'node:perf_hooks';
import { runEngine } from '../../functions/engine/run-engine.js';
import type { Trigger } from '../../functions/ports/trigger.js';
import type { ScaleWorld } from './scale-world.js';

export type ScaleEvent = 'pod-eviction' | 'workflow_job.completed' | 'spot-warning';

export interface EventCost {
  event: ScaleEvent;
  wallMs: number;
  storeReads: number;
  storeBytes: number;
  kubeCalls: number;
  kubeLists: number;
  kubeClusterWideLists: number;
  githubCalls: number;
}

/** Triggers one event about runner `r` and measures what handling it cost. */
export async function measureEvent(
  world: ScaleWorld,
  event: ScaleEvent,
  r: number,
): Promise<EventCost> {
  return { ...(await measureTrigger(world, triggerFor(world, event, r))), event };
}

/** Measures what handling one trigger cost. */
export async function measureTrigger(
  world: ScaleWorld,
  trigger: Trigger,
): Promise<Omit<EventCost, 'event'>> {
  world.meter.reset();
  const kube = world.kubeMark();
  const github = world.githubMark();
  const t0 = performance.now();
  await runEngine(trigger, world.deps);
  const wallMs = performance.now() - t0;
  const k = world.kubeSince(kube);
  return {
    wallMs: Math.round(wallMs * 10) / 10,
    storeReads: world.meter.itemsRead,
    storeBytes: world.meter.bytesRead,
    kubeCalls: k.calls,
    kubeLists: k.lists,
    kubeClusterWideLists: k.clusterWideLists,
    githubCalls: world.githubSince(github),
  };
}

function triggerFor(world: ScaleWorld, event: ScaleEvent, r: number): Trigger {
  switch (event) {
    case 'pod-eviction':
      return {
        kind: 'cluster',
        input: { kind: 'kube-events', events: [world.evict(r)], rejected: [] },
      };
    case 'workflow_job.completed': {
      const record = world.completedJob(r);
      return {
        kind: 'observation',
        observation: {
          kind: 'job.completed',
          deliveryId: `delivery-${r}`,
          installationId: record.installationId,
          repository: record.repository,
          receivedAt: new Date(world.clock.now()).toISOString(),
          job: record.job,
        },
      };
    }
    case 'spot-warning':
      return {
        kind: 'cluster',
        input: {
          kind: 'ec2',
          event: {
            kind: 'ec2-spot-interruption-warning',
            instanceId: world.instanceOfRunner(r),
            instanceAction: 'terminate',
            region: 'eu-west-1',
            account: '123456789012',
            at: world.clock.now(),
          },
        },
      };
  }
}
