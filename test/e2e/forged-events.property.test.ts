/**
 * Forged Kubernetes events mixed into a shipped scenario, through the scenario runner's public
 * API: a wrapper around the cluster twin puts them on the bus beside the cluster's real events,
 * about the cluster's own runner pods and nodes.
 *
 * Whatever is forged (any disruption reason, from any component including the genuine emitter,
 * the two component fields agreeing or not, dated or not), a runner whose pod is Running and Ready
 * on a Ready node is never touched: the edge refuses reasons from the wrong component, and the
 * engine refuses the rest on the word of the live objects (docs/security.md).
 */
import { join } from 'node:path';
import fc from 'fast-check';
import type { BusEntry, ClusterTwin } from '../../sim/scenario/cluster-twin.js';
import { createKubeClusterTwin } from '../../sim/scenario/kube-cluster-twin.js';
import { runScenario, START } from '../../sim/scenario/run-scenario.js';
import type { CreateClusterInput } from '../../sim/scenario/run-scenario.js';
import { loadScenario } from '../../sim/scenario/scenario-schema.js';

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

function forge(real: BusEntry, f: ForgeryValue, nowMs: number): BusEntry | undefined {
  // The real entry names one of the cluster's runner pods (and, by its host, its node).
  // Only forgeries about runner pods and their nodes: the real entry names a runner pod.
  const detail = real.detail as Record<string, unknown>;
  const involved = detail.involvedObject as Record<string, unknown> | undefined;
  const sourceField = detail.source as { host?: string } | undefined;
  if (!involved) return undefined;
  const reportingComponent =
    f.reporting === 'missing' ? undefined : f.reporting === 'same' ? f.source : f.reporting;
  const source = f.source;
  const time = new Date(nowMs).toISOString();
  const onNode = f.onNode && sourceField?.host;
  return {
    ...real,
    detail: {
      ...detail,
      reason: onNode ? f.nodeReason : f.podReason,
      message: f.message,
      type: 'Warning',
      source: { component: source, ...(sourceField?.host ? { host: sourceField.host } : {}) },
      ...(reportingComponent === undefined
        ? { reportingComponent: undefined }
        : { reportingComponent }),
      firstTimestamp: f.dated ? time : null,
      lastTimestamp: f.dated ? time : null,
      eventTime: null,
      metadata: { ...(detail.metadata as object), creationTimestamp: f.dated ? time : null },
      involvedObject: onNode
        ? { kind: 'Node', name: sourceField?.host, uid: 'forged-node-uid' }
        : involved,
    },
  };
}

/** The real twin, with `forgeries` put on its bus beside its own events, about its own pods. */
function withForgeries(forgeries: ForgeryValue[], forged: BusEntry[]) {
  return async (input: CreateClusterInput): Promise<ClusterTwin> => {
    const twin = await createKubeClusterTwin(input);
    const listeners: ((entry: BusEntry) => void)[] = [];
    const seen: BusEntry[] = [];
    twin.onBusEntry((entry) => {
      const involved = (entry.detail as { involvedObject?: { kind?: string } }).involvedObject;
      if (involved?.kind === 'Pod') seen.push(entry);
    });
    for (const f of forgeries) {
      input.clock.at(START + f.atSeconds * 1000, 'forged event', () => {
        const real = seen[f.pick % Math.max(1, seen.length)];
        const entry = real && forge(real, f, input.clock.now());
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
