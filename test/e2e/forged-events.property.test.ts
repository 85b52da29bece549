/**
 * Forged Kubernetes events mixed into a shipped scenario, through the scenario runner's public
 * API: a wrapper around the cluster twin puts them on the bus beside the cluster's real events,
 * about the cluster's own runner pods (by name, uid, labels and owners) and their nodes.
 *
 * Whatever is forged (any disruption reason, from any component including the genuine emitter,
 * the two component fields agreeing or not, dated or not), a runner whose pod is Running and Ready
 * on a Ready node is never touched: the edge refuses reasons from the wrong component, and the
 * engine refuses the rest on the word of the live objects (docs/security.md).
 */
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { shippedExporterRouting } from '../../sim/kube/export/shipped-exporter-config.js';
import type { BusEntry, ClusterTwin } from '../../sandbox/scenario/cluster-twin.js';
import { createKubeClusterTwin } from '../../sandbox/scenario/kube-cluster-twin.js';
import { runScenario, START } from '../../sandbox/scenario/run-scenario.js';
import type { CreateClusterInput } from '../../sandbox/scenario/run-scenario.js';
import { loadScenario } from '../../sandbox/scenario/scenario-schema.js';

/**
 * A job fails on its own on a healthy runner: runner-medic must make no call at all. Its job is
 * stretched to 25 minutes here, so that the runner stays Running and Ready (on a Ready node) for
 * as long as the forgeries arrive, well past any grace period.
 */
const SCENARIO = 'test/scenarios/genuine-failure.yaml';
const JOB_SECONDS = 1500;

const POD_REASONS = [
  'Evicted',
  'Preempting',
  'Preempted',
  'OutOfmemory',
  'NodeShutdown',
  'TaintManagerEviction',
  'Disrupted',
  'SpotInterrupted',
] as const;
const NODE_REASONS = ['SpotInterrupted', 'NodeNotReady', 'DisruptionTerminating', 'RemovingNode'];
/** Every component that emits one of those reasons. */
const EMITTERS = [
  'kubelet',
  'karpenter',
  'default-scheduler',
  'taint-eviction-controller',
  'taint-controller',
  'node-controller',
  'cloud-node-lifecycle-controller',
  'aws-node-termination-handler',
  'node-termination-handler',
];

const component = fc.oneof(
  fc.constantFrom(...EMITTERS),
  fc.constantFrom('kubectl', 'my-operator', 'kubelet-', 'Karpenter2', 'default', ''),
  fc.string({ minLength: 1, maxLength: 40 }),
);

const forgery = fc.record({
  atSeconds: fc.integer({ min: 20, max: 1100 }),
  onNode: fc.boolean(),
  podReason: fc.constantFrom(...POD_REASONS),
  nodeReason: fc.constantFrom(...NODE_REASONS),
  source: component,
  /** The other component field: missing, the same, or another one. */
  reporting: fc.oneof(fc.constantFrom('missing', 'same'), component),
  dated: fc.boolean(),
  message: fc.constantFrom(
    'The node was low on resource: memory. ',
    'Evicted pod: Underutilized',
    'Disrupting Node: Underutilized/Delete',
    'Preempted in order to admit critical pod',
  ),
  pick: fc.nat(),
});
type ForgeryValue = typeof forgery extends fc.Arbitrary<infer T> ? T : never;

/** A runner pod of the cluster as the API server has it now: the target of a forgery. */
type RealPod = Pick<V1Pod, 'metadata' | 'spec'>;

/**
 * A forged event in the exporter's shape (sim/kube/export/event-exporter.ts, `enhancedEvent`),
 * about a real runner pod (its name, namespace, uid, labels and owners) or about its node.
 */
function forge(
  pod: RealPod,
  f: ForgeryValue,
  nowMs: number,
  cluster: { name: string; source: string; detailType: string },
): BusEntry | undefined {
  const meta = pod.metadata;
  const node = pod.spec?.nodeName;
  if (!meta?.name || !meta.namespace) return undefined;
  const reportingComponent =
    f.reporting === 'missing' ? undefined : f.reporting === 'same' ? f.source : f.reporting;
  const time = new Date(nowMs).toISOString();
  const onNode = f.onNode && node;
  return {
    source: cluster.source,
    'detail-type': cluster.detailType,
    detail: {
      metadata: {
        name: `${onNode ? node : meta.name}.forged${f.pick}`,
        namespace: onNode ? 'default' : meta.namespace,
        uid: `forged-event-${f.pick}`,
        creationTimestamp: f.dated ? time : null,
      },
      reason: onNode ? f.nodeReason : f.podReason,
      message: f.message,
      type: 'Warning',
      source: { component: f.source, ...(node ? { host: node } : {}) },
      ...(reportingComponent === undefined ? {} : { reportingComponent }),
      firstTimestamp: f.dated ? time : null,
      lastTimestamp: f.dated ? time : null,
      eventTime: null,
      count: 1,
      clusterName: cluster.name,
      involvedObject: onNode
        ? { kind: 'Node', name: node, uid: 'forged-node-uid', deleted: false }
        : {
            kind: 'Pod',
            namespace: meta.namespace,
            name: meta.name,
            uid: meta.uid,
            apiVersion: 'v1',
            labels: { ...meta.labels },
            ownerReferences: meta.ownerReferences ?? [],
            deleted: false,
          },
    },
  };
}

/** The cluster's runner pods, read as an administrator (ARC's runner label). */
async function runnerPods(twin: ClusterTwin): Promise<RealPod[]> {
  const config = new KubeConfig();
  config.loadFromString(twin.kubeconfig('admin'));
  const list = await config.makeApiClient(CoreV1Api).listPodForAllNamespaces({
    labelSelector: 'actions-ephemeral-runner=True',
  });
  return list.items;
}

/**
 * The real twin, with `forgeries` put on its bus beside its own events. Each names one of the
 * cluster's runner pods as it is at that moment (read from its API server: the shipped exporter
 * route lets none of a healthy runner's own events through), or that pod's node.
 */
function withForgeries(forgeries: ForgeryValue[], forged: BusEntry[]) {
  return async (input: CreateClusterInput): Promise<ClusterTwin> => {
    const twin = await createKubeClusterTwin(input);
    const namespaces = [...new Set(input.spec.scaleSets.map((set) => set.namespace))];
    const [receiver] = Object.values(
      shippedExporterRouting({ clusterName: input.spec.name, runnerNamespaces: namespaces })
        .receivers,
    );
    if (!receiver) throw new Error('the shipped exporter config has no EventBridge receiver');
    const cluster = { name: input.spec.name, ...receiver };
    const listeners: ((entry: BusEntry) => void)[] = [];
    for (const f of forgeries) {
      // The clock awaits its callbacks: the read happens at this simulated moment.
      input.clock.at(START + f.atSeconds * 1000, 'forged event', async () => {
        const pods = await runnerPods(twin);
        const real = pods[f.pick % Math.max(1, pods.length)];
        const entry = real && forge(real, f, input.clock.now(), cluster);
        if (!entry) return;
        forged.push(entry);
        for (const listener of listeners) listener(entry);
      });
    }
    return {
      ...twin,
      name: twin.name,
      kubeconfig: (actor) => twin.kubeconfig(actor),
      audit: () => twin.audit(),
      applyFault: (fault) => twin.applyFault(fault),
      stop: () => twin.stop(),
      onBusEntry: (listener) => {
        listeners.push(listener);
        twin.onBusEntry(listener);
      },
    };
  };
}

describe('forged events mixed into a shipped scenario', () => {
  it('whatever is forged, runner-medic touches no runner that is Running and Ready on a Ready node', async () => {
    const shipped = await loadScenario(join(SCENARIO));
    const scenario = {
      ...shipped,
      repos: shipped.repos.map((repo) => ({
        ...repo,
        workflows: repo.workflows.map((workflow) => ({
          ...workflow,
          jobs: workflow.jobs.map((job) => ({
            ...job,
            durationSeconds: JOB_SECONDS,
            fails: { afterSeconds: JOB_SECONDS - 100 },
          })),
        })),
      })),
    };
    let forgedTotal = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(forgery, { minLength: 3, maxLength: 8 }), async (forgeries) => {
        const forged: BusEntry[] = [];
        const outcome = await runScenario(scenario, {
          remediation: true,
          createCluster: withForgeries(forgeries, forged),
        });
        forgedTotal += forged.length;
        expect(outcome.errors).toEqual([]);
        expect(outcome.medicCalls).toEqual({ kubernetes: 0, github: 0 });
        expect(outcome.failedExpectations).toEqual([]);
        expect(outcome.violations).toEqual([]);
      }),
      { numRuns: 3, seed: 20261202, endOnFailure: true },
    );
    // The property ran on forgeries, not on nothing.
    expect(forgedTotal).toBeGreaterThan(5);
  }, 120_000);
});
