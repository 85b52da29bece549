import type { EventBridgeEvent } from '../../../sim/kube/index.js';
import { SHUTDOWN_SIGNAL_MESSAGE } from '../../../sim/kube/index.js';
import type { CoreEvent, Node, Pod } from '../../../sim/kube/types.js';
import { arcCluster, busyRunner, condition, NS } from './helpers.js';

type Cluster = Awaited<ReturnType<typeof arcCluster>>;

const eventsFor = (cluster: Cluster, name: string) =>
  cluster.api.all<CoreEvent>('events').filter((e) => e.involvedObject.name === name);

/** Captures every version of a pod the store sees (it may be gone by the time we look). */
function podHistory(cluster: Cluster, name: string): Pod[] {
  const seen: Pod[] = [];
  cluster.api.store.subscribe((ev) => {
    if (ev.resource === 'pods' && ev.object.metadata.name === name)
      seen.push(structuredClone(ev.object) as Pod);
  });
  return seen;
}

describe('kubelet behaviour', () => {
  it('node-pressure eviction: Failed/Evicted with the kubelet message, DisruptionTarget, and a Warning event with offending_containers', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod, jobId } = await busyRunner(cluster);
    const name = pod.metadata.name as string;
    const history = podHistory(cluster, name);
    cluster.faults.evictForNodePressure(NS, name, 'memory');
    await cluster.advance(1);
    const evicted = history.find((p) => p.status?.reason === 'Evicted') as Pod;
    const message =
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 87232Ki. Container runner was using 5434828Ki, request is 0, has larger consumption of memory. ';
    expect(evicted.status).toMatchObject({ phase: 'Failed', reason: 'Evicted', message });
    expect(condition(evicted, 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
      message,
    });
    expect(evicted.status?.containerStatuses?.[0]?.state.terminated).toMatchObject({
      exitCode: 137,
    });
    const warning = eventsFor(cluster, name).find((e) => e.reason === 'Evicted') as CoreEvent;
    expect(warning).toMatchObject({
      type: 'Warning',
      message,
      source: { component: 'kubelet', host: 'node-a' },
    });
    expect(warning.metadata.annotations).toEqual({
      offending_containers: 'runner',
      offending_containers_usage: '5434828Ki',
      starved_resource: 'memory',
    });
    const node = cluster.api.get('nodes', undefined, 'node-a') as Node;
    expect(node.spec.taints).toEqual([
      expect.objectContaining({ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }),
    ]);
    // Killed without warning: GitHub fails the job only when the runner's lease lapses.
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
    await cluster.advance(10 * 60_000);
    expect(cluster.actions.job(jobId)?.conclusion).toBe('failure');
    // The pressure condition clears after the transition period.
    expect((cluster.api.get('nodes', undefined, 'node-a') as Node).spec.taints).toBeUndefined();
  });

  it.each([
    ['disk', 'ephemeral-storage'],
    ['pid', 'pids'],
  ] as const)('node-pressure eviction for %s names the %s resource', async (signal, resource) => {
    const cluster = await arcCluster({ minRunners: 1 });
    await cluster.runUntil(() => cluster.pods(NS).some((p) => p.status?.phase === 'Running'));
    const name = cluster.pods(NS)[0]?.metadata.name as string;
    const history = podHistory(cluster, name);
    cluster.faults.evictForNodePressure(NS, name, signal);
    await cluster.advance(1);
    expect(history.find((p) => p.status?.reason === 'Evicted')?.status?.message).toMatch(
      new RegExp(`^The node was low on resource: ${resource}\\. Threshold quantity: `),
    );
  });

  it('admission reject: `Pod was rejected: The node had condition: [DiskPressure]. ` with no container statuses', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13', minRunners: 1 });
    await cluster.runUntil(() => cluster.pods(NS).some((p) => p.spec.nodeName === 'node-a'), {
      stepMs: 100,
    });
    cluster.addNode({ name: 'node-b' });
    const name = cluster.pods(NS)[0]?.metadata.name as string;
    const history = podHistory(cluster, name);
    cluster.faults.admissionReject(NS, name, 'DiskPressure');
    await cluster.advance(1);
    const rejected = history.find((p) => p.status?.reason === 'Evicted') as Pod;
    expect(rejected.status).toMatchObject({
      phase: 'Failed',
      reason: 'Evicted',
      message: 'Pod was rejected: The node had condition: [DiskPressure]. ',
    });
    expect(history.at(-1)?.status?.containerStatuses).toBeUndefined();
    expect(eventsFor(cluster, name).find((e) => e.reason === 'Evicted')).toMatchObject({
      type: 'Warning',
      message: 'The node had condition: [DiskPressure]. ',
      source: { component: 'kubelet' },
    });
    // 0.13 retries the pod (no job) after its backoff; the scheduler avoids the tainted node.
    await cluster.runUntil(() => cluster.pod(NS, name)?.status?.phase === 'Running');
    expect(cluster.pod(NS, name)?.spec.nodeName).toBe('node-b');
  });

  it('graceful node shutdown: Terminated / "Pod was terminated in response to imminent node shutdown."; a busy runner fails its job with the shutdown signal', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod, jobId } = await busyRunner(cluster);
    const history = podHistory(cluster, pod.metadata.name as string);
    cluster.faults.gracefulNodeShutdown('node-a', 30_000);
    await cluster.advance(5_000);
    const terminated = history.find((p) => p.status?.reason === 'Terminated') as Pod;
    expect(terminated.status).toMatchObject({
      phase: 'Failed',
      reason: 'Terminated',
      message: 'Pod was terminated in response to imminent node shutdown.',
    });
    expect(condition(terminated, 'DisruptionTarget')).toMatchObject({
      reason: 'TerminationByKubelet',
    });
    expect(cluster.actions.job(jobId)).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      failureMessage: SHUTDOWN_SIGNAL_MESSAGE,
    });
  });

  it('OOMKilled: the runner container terminates with exit code 137, reason OOMKilled', async () => {
    const cluster = await arcCluster({ arcVersion: '0.9' });
    const { pod } = await busyRunner(cluster);
    const history = podHistory(cluster, pod.metadata.name as string);
    cluster.faults.oomKill(NS, pod.metadata.name as string);
    await cluster.advance(1);
    const oom = history.find((p) => p.status?.phase === 'Failed') as Pod;
    expect(oom.status?.containerStatuses?.[0]?.state.terminated).toMatchObject({
      exitCode: 137,
      reason: 'OOMKilled',
    });
  });
});

describe('Karpenter', () => {
  it('consolidation: taint, DisruptionTerminating, eviction via the API (DisruptionTarget), `Evicted pod:` events, SIGTERM to the busy runner, node and instance gone', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    cluster.addNode({ name: 'node-b' });
    const { pod, jobId } = await busyRunner(cluster);
    const nodeName = pod.spec.nodeName as string;
    const history = podHistory(cluster, pod.metadata.name as string);
    expect(cluster.faults.karpenterDisrupt(nodeName, 'consolidation')).toBe('started');
    expect((cluster.api.get('nodes', undefined, nodeName) as Node).spec.taints).toEqual([
      expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }),
    ]);
    expect(
      eventsFor(cluster, nodeName).find((e) => e.reason === 'DisruptionTerminating'),
    ).toMatchObject({
      type: 'Normal',
      message: 'Disrupting Node: Underutilized',
      source: { component: 'karpenter' },
    });
    expect(
      eventsFor(cluster, pod.metadata.name as string).find((e) => e.reason === 'Evicted'),
    ).toMatchObject({ message: 'Evicted pod: Underutilized', source: { component: 'karpenter' } });
    expect(condition(history.at(-1), 'DisruptionTarget')).toMatchObject({
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    expect(
      cluster.audit.entries.find((e) => e.by === 'karpenter' && e.verb === 'evict'),
    ).toMatchObject({
      resource: 'pods',
      name: pod.metadata.name,
      labels: expect.objectContaining({ 'actions-ephemeral-runner': 'True' }),
    });
    await cluster.advance(60_000);
    expect(cluster.actions.job(jobId)).toMatchObject({
      conclusion: 'failure',
      failureMessage: SHUTDOWN_SIGNAL_MESSAGE,
    });
    expect(cluster.api.tryGet('nodes', undefined, nodeName)).toBeUndefined();
    const states = cluster.bus.deliveries
      .filter(
        (d) =>
          d.event['detail-type'] === 'EC2 Instance State-change Notification' &&
          d.event.resources[0]?.endsWith(cluster.ec2.byNode(nodeName)?.id as string),
      )
      .map((d) => (d.event.detail as { state: string }).state);
    expect(states).toEqual(['pending', 'running', 'shutting-down', 'terminated']);
  });

  it.each([
    ['consolidation', 'blocked'],
    ['drift', 'blocked'],
    ['expiry', 'started'],
  ] as const)('karpenter.sh/do-not-disrupt: %s is %s', async (method, outcome) => {
    const cluster = await arcCluster({
      arcVersion: '0.13',
      minRunners: 1,
      podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
    });
    await cluster.runUntil(() => cluster.pods(NS).some((p) => p.status?.phase === 'Running'));
    const pod = cluster.pods(NS)[0] as Pod;
    expect(pod.metadata.annotations?.['karpenter.sh/do-not-disrupt']).toBe('true');
    expect(cluster.faults.karpenterDisrupt('node-a', method)).toBe(outcome);
    const events = eventsFor(cluster, 'node-a').map((e) => `${e.reason}: ${e.message}`);
    if (outcome === 'blocked')
      expect(events).toContain(
        `DisruptionBlocked: Cannot disrupt Node: pod "${NS}/${pod.metadata.name}" has "karpenter.sh/do-not-disrupt" annotation`,
      );
    else expect(events).toContain('DisruptionTerminating: Disrupting Node: Expired');
  });
});

describe('EC2', () => {
  it("spot interruption on a Karpenter node: the warning in AWS's envelope, SpotInterrupted, drain, then the instance and node are gone", async () => {
    const cluster = await arcCluster({ arcVersion: '0.13', region: 'us-east-1' });
    const { pod, jobId } = await busyRunner(cluster);
    const instance = cluster.ec2.byNode('node-a');
    expect((cluster.api.get('nodes', undefined, 'node-a') as Node).spec.providerID).toBe(
      `aws:///us-east-1a/${instance?.id}`,
    );
    cluster.faults.spotInterruption('node-a');
    const warning = cluster.bus.deliveries.find(
      (d) => d.event['detail-type'] === 'EC2 Spot Instance Interruption Warning',
    )?.event as EventBridgeEvent;
    expect(warning).toMatchObject({
      version: '0',
      source: 'aws.ec2',
      account: '123456789012',
      region: 'us-east-1',
      resources: [`arn:aws:ec2:us-east-1:123456789012:instance/${instance?.id}`],
      detail: { 'instance-id': instance?.id, 'instance-action': 'terminate' },
    });
    expect(warning.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await cluster.advance(5_000);
    expect(eventsFor(cluster, 'node-a').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['SpotInterrupted', 'TerminatingOnInterruption']),
    );
    expect(
      eventsFor(cluster, pod.metadata.name as string).map((e) => `${e.reason}: ${e.message}`),
    ).toEqual(
      expect.arrayContaining([
        'SpotInterrupted: Spot interruption warning was triggered',
        'Evicted: Evicted pod: Forceful Termination',
      ]),
    );
    expect(cluster.actions.job(jobId)?.failureMessage).toBe(SHUTDOWN_SIGNAL_MESSAGE);
    await cluster.advance(200_000);
    expect(cluster.api.tryGet('nodes', undefined, 'node-a')).toBeUndefined();
    expect(instance?.state).toBe('terminated');
  });

  it('spot interruption without Karpenter: reclaimed exactly 120 s later, runners killed, node deleted, pods left to PodGC', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    cluster.addNode({ name: 'plain', karpenter: false });
    cluster.faults.setNodePressure('node-a', 'PIDPressure', true);
    const { pod, jobId } = await busyRunner(cluster);
    expect(pod.spec.nodeName).toBe('plain');
    const t0 = cluster.clock.now();
    cluster.faults.spotInterruption('plain');
    await cluster.advance(119_000);
    expect(cluster.actions.runners.get(pod.metadata.name as string)?.stopped).toBeUndefined();
    await cluster.advance(1_000);
    const id = cluster.ec2.byNode('plain')?.id;
    const shutting = cluster.bus.deliveries.find(
      (d) =>
        d.event['detail-type'] === 'EC2 Instance State-change Notification' &&
        (d.event.detail as Record<string, string>)['instance-id'] === id &&
        (d.event.detail as Record<string, string>).state === 'shutting-down',
    );
    expect(shutting?.at).toBe(t0 + 120_000);
    expect(cluster.actions.runners.get(pod.metadata.name as string)?.stopped).toBe('killed');
    await cluster.advance(
      cluster.timings.instanceShutdownMs +
        cluster.timings.nodeDeleteAfterInstanceGoneMs +
        cluster.timings.podGcDelayMs +
        1_000,
    );
    expect(cluster.api.tryGet('nodes', undefined, 'plain')).toBeUndefined();
    expect(cluster.pod(NS, pod.metadata.name as string)?.metadata.uid).not.toBe(pod.metadata.uid);
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
  });

  it('node deleted: PodGC marks DeletionByPodGC and removes the pod (NotFound)', async () => {
    const cluster = await arcCluster({ arcVersion: '0.9' });
    const { pod, jobId } = await busyRunner(cluster);
    const history = podHistory(cluster, pod.metadata.name as string);
    cluster.faults.deleteNode('node-a');
    await cluster.advance(cluster.timings.podGcDelayMs - 1_000);
    expect(cluster.pod(NS, pod.metadata.name as string)?.metadata.uid).toBe(pod.metadata.uid);
    await cluster.advance(2_000);
    const gc = history.find(
      (p) => condition(p, 'DisruptionTarget')?.reason === 'DeletionByPodGC',
    ) as Pod;
    expect(condition(gc, 'DisruptionTarget')).toMatchObject({
      message: 'PodGC: node no longer exists',
    });
    expect(gc.status?.phase).toBe('Failed');
    expect(
      cluster.audit.entries.find((e) => e.by === 'pod-gc' && e.verb === 'delete'),
    ).toMatchObject({ name: pod.metadata.name });
    expect(cluster.actions.job(jobId)?.status).toBe('in_progress');
  });

  it('a powered-off node goes Unknown with unreachable taints; after 300 s its pods are stuck Terminating', async () => {
    const cluster = await arcCluster({ arcVersion: '0.13' });
    const { pod } = await busyRunner(cluster);
    cluster.faults.powerOffNode('node-a');
    await cluster.advance(41_000);
    const node = cluster.api.get('nodes', undefined, 'node-a') as Node;
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      message: 'Kubelet stopped posting node status.',
    });
    expect(node.spec.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/unreachable:NoSchedule',
      'node.kubernetes.io/unreachable:NoExecute',
    ]);
    expect(cluster.pod(NS, pod.metadata.name as string)?.status?.phase).toBe('Running');
    await cluster.advance(300_000);
    const stuck = cluster.pod(NS, pod.metadata.name as string);
    expect(stuck?.metadata.deletionTimestamp).toBeDefined();
    expect(condition(stuck, 'DisruptionTarget')).toMatchObject({
      reason: 'DeletionByTaintManager',
    });
  });
});
