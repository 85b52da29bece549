import type { ArcVersion } from '../../sim/kube/arc/arc-version.js';
import { ARC_VERSIONS } from '../../sim/kube/arc/arc-version.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { shippedExporterRouting } from '../../sim/kube/export/shipped-exporter-config.js';
import { Rng } from '../../sim/rng.js';
import type { Pod } from '../../sim/kube/types.js';
import type { BusEntry, ClusterTwin } from './cluster-twin.js';
import type { AppliedFault } from './outcome.js';
import type { CreateClusterInput } from './run-scenario.js';
import type { ClusterFault, PodTarget } from './scenario-schema.js';
import { ScenarioError } from './scenario-schema.js';

const RUNNER_LABEL = 'actions-ephemeral-runner';
const SCALE_SET_LABEL = 'actions.github.com/scale-set-name';
/** How long a fault waits for its target pod to appear before giving up. */
const TARGET_PATIENCE_MS = 30_000;
const TARGET_POLL_MS = 500;
/**
 * Real ms per second of a watch's `timeoutSeconds` when the scenario's clock drives the play. The
 * clock stands still while runner-medic's handler waits on its watches (each timer's callback is
 * awaited), so the real 1 s before each pre-deadline bookmark only costs wall time, a minute or
 * more per play; the stream's order (replayed events, bookmark, end) is the same.
 */
const SCENARIO_WATCH_SECOND_MS = 10;

export interface KubeClusterTwinOptions {
  /**
   * Real ms per second of a watch's `timeoutSeconds` (default 10, see above). A twin that clients
   * outside the clock watch in real time, as `npm run twin`'s, gives 1000.
   */
  watchSecondMs?: number;
}

export interface KubeClusterTwin extends ClusterTwin {
  /**
   * The API server's resourceVersion now (one counter over every write, as etcd's revision), read
   * in-process: a harness waiting for watches to catch up learns whether anything was written.
   */
  resourceVersion(): number;
}

/** A scenario cluster on sim/kube's SimCluster, wired to the GitHub twin's Actions service. */
export async function createKubeClusterTwin(
  input: CreateClusterInput,
  options: KubeClusterTwinOptions = {},
): Promise<KubeClusterTwin> {
  const { spec, clock, github } = input;
  const runnerNamespaces = [...new Set(spec.scaleSets.map((set) => set.namespace))];
  const cluster = new SimCluster({
    name: spec.name,
    arcVersion: modelledArcVersion(spec.name, spec.arcVersion),
    // Always on: runner-medic gets exactly what the scenario's (by default the shipped) grants say.
    rbac: true,
    // As the real controllers do: the ERS patch-ID gate (0.9.3 and 0.13.1), and 0.13.1's early
    // release of the ER finalizer (0.15 has both already). See sim/kube/README.md.
    arc: {
      patchIdGate: true,
      releaseFinalizerBeforePodGone: spec.arcVersion !== '0.9',
    },
    seed: `${String(input.seed)}:${spec.name}`,
    clock,
    actionsService: github.actions,
    // The shipped exporter config, as deployed for this cluster: its route, its age limit.
    eventExport: {
      dropRate: input.eventDrop,
      routing: shippedExporterRouting({ clusterName: spec.name, runnerNamespaces }),
    },
    karpenter: { provisioning: spec.karpenterProvisioning },
    watchSecondMs: options.watchSecondMs ?? SCENARIO_WATCH_SECOND_MS,
  });
  for (const node of spec.nodes) {
    cluster.addNode({
      name: node.name,
      instanceId: node.instanceId,
      zone: node.zone,
      capacityType: node.capacityType,
      karpenter: node.karpenter,
    });
  }
  for (const file of spec.rbac.manifests) {
    // Namespaced grants (Role, RoleBinding) once per runner namespace, as `kubectl apply -n`.
    cluster.applyManifestFile(file, { namespaces: runnerNamespaces });
  }
  for (const set of spec.scaleSets) {
    cluster.addScaleSet({
      name: set.name,
      namespace: set.namespace,
      minRunners: set.minRunners,
      maxRunners: set.maxRunners,
      githubConfigUrl: `https://github.com/${set.owner}`,
      ...(set.doNotDisrupt ? { podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' } } : {}),
      onSigterm: set.onSigterm,
      ...(set.gracefulStopTimeoutSeconds !== undefined
        ? { gracefulStopTimeoutSeconds: set.gracefulStopTimeoutSeconds }
        : {}),
      ...(set.terminationGracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: set.terminationGracePeriodSeconds }
        : {}),
      ...(set.node !== undefined ? { nodeSelector: { 'kubernetes.io/hostname': set.node } } : {}),
      ...(set.runnerVersion !== undefined ? { runnerVersion: set.runnerVersion } : {}),
    });
  }
  const deprecation = input.runnerDeprecation;
  if (deprecation) {
    clock.at(
      Math.max(deprecation.runtimeAt, clock.now()),
      `runner floor ${deprecation.below}`,
      () => {
        cluster.kubelets.minimumRunnerVersion = deprecation.below;
      },
    );
  }
  for (const pod of spec.otherPods) placeOtherPod(cluster, pod);
  await cluster.start();
  if (input.kubeServerErrors > 0) {
    const draws = new Rng(`${String(input.seed)}:${spec.name}:api-faults`);
    cluster.apiServer.injectFaults((actor) =>
      actor === 'runner-medic' && draws.chance(input.kubeServerErrors) ? 503 : undefined,
    );
  }

  const listeners: ((entry: BusEntry) => void)[] = [];
  cluster.bus.subscribe((delivery) => {
    for (const listener of listeners) listener(delivery.event);
  });

  return {
    name: spec.name,
    kubeconfig: (actor) => cluster.kubeconfig(actor),
    audit: () => cluster.audit.entries,
    requests: () => cluster.audit.requests,
    resourceVersion: () => cluster.api.store.currentRv(),
    onBusEntry: (listener) => void listeners.push(listener),
    applyFault: (fault) => applyFault(cluster, input, fault),
    stop: () => cluster.stop(),
  };
}

function placeOtherPod(
  cluster: SimCluster,
  pod: { namespace: string; name: string; node: string; labels: Record<string, string> },
): void {
  cluster.createNamespace(pod.namespace);
  cluster.api.create('scenario', 'pods', pod.namespace, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: pod.namespace, labels: pod.labels },
    spec: { nodeName: pod.node, containers: [{ name: 'app', image: 'registry.example/app:1' }] },
  });
}

async function applyFault(
  cluster: SimCluster,
  input: CreateClusterInput,
  fault: ClusterFault,
): Promise<AppliedFault> {
  const { clock } = input;
  const base = { kind: fault.kind, cluster: cluster.name };
  switch (fault.kind) {
    case 'cluster-unreachable': {
      await cluster.apiServer.setUnreachable(fault.answer);
      if (fault.until !== undefined) {
        clock.at(input.start + fault.until * 1000, `${cluster.name} answers again`, () =>
          cluster.apiServer.setUnreachable(undefined),
        );
      }
      return { ...base, at: clock.now(), namespace: null, scaleSet: null, pods: [] };
    }
    case 'evict-pod':
    case 'admission-reject':
    case 'oom-kill':
    case 'terminate-pod':
    case 'kill-pod': {
      const pod = await waitForPod(cluster, input, fault.target);
      if (!pod) return { ...base, at: clock.now(), namespace: null, scaleSet: null, pods: [] };
      const ns = pod.metadata.namespace ?? '';
      const name = pod.metadata.name ?? '';
      if (fault.kind === 'evict-pod') {
        cluster.faults.evictForNodePressure(
          ns,
          name,
          fault.resource === 'ephemeral-storage' ? 'disk' : fault.resource,
        );
      } else if (fault.kind === 'admission-reject')
        cluster.faults.admissionReject(ns, name, 'DiskPressure');
      else if (fault.kind === 'terminate-pod')
        cluster.faults.terminatePod(ns, name, {
          ...(fault.gracePeriodSeconds !== undefined
            ? { gracePeriodSeconds: fault.gracePeriodSeconds }
            : {}),
        });
      else if (fault.kind === 'kill-pod') cluster.faults.killPod(ns, name);
      else cluster.faults.oomKill(ns, name);
      return {
        ...base,
        at: clock.now(),
        namespace: ns,
        scaleSet: pod.metadata.labels?.[SCALE_SET_LABEL] ?? null,
        pods: isRunner(pod) ? [name] : [],
      };
    }
    default: {
      const node =
        fault.node ?? (fault.nodeOfJob ? nodeOfJob(cluster, input, fault.nodeOfJob) : undefined);
      const hit = node ? runnerPodsOn(cluster, node) : [];
      const scaleSet = hit[0]?.metadata.labels?.[SCALE_SET_LABEL] ?? null;
      const applied: AppliedFault = {
        ...base,
        at: clock.now(),
        namespace: hit[0]?.metadata.namespace ?? null,
        scaleSet,
        pods: hit.map((p) => p.metadata.name ?? ''),
      };
      if (!node) return applied;
      if (fault.kind === 'node-pressure') {
        cluster.faults.setNodePressure(node, fault.condition, true);
        clock.after(fault.durationSeconds * 1000, `${fault.condition} clears on ${node}`, () =>
          cluster.faults.setNodePressure(node, fault.condition, false),
        );
      } else if (fault.kind === 'disrupt-node') cluster.faults.karpenterDisrupt(node, fault.reason);
      else if (fault.kind === 'spot-interruption') cluster.faults.spotInterruption(node);
      else if (fault.kind === 'delete-node') cluster.faults.deleteNode(node);
      else if (fault.kind === 'node-not-ready')
        cluster.faults.nodeNotReady(node, { runners: fault.runners });
      else cluster.faults.gracefulNodeShutdown(node);
      return applied;
    }
  }
}

/** The pod a target names, waiting (in simulated time) for it to exist in the wanted state. */
async function waitForPod(
  cluster: SimCluster,
  input: CreateClusterInput,
  target: PodTarget,
): Promise<Pod | undefined> {
  const deadline = input.clock.now() + TARGET_PATIENCE_MS;
  for (;;) {
    const pod = findPod(cluster, input, target);
    if (pod || input.clock.now() >= deadline) return pod;
    await input.clock.advance(TARGET_POLL_MS);
  }
}

function findPod(
  cluster: SimCluster,
  input: CreateClusterInput,
  target: PodTarget,
): Pod | undefined {
  if ('pod' in target) return cluster.pod(target.namespace, target.pod);
  if ('runnerOfJob' in target) {
    const runner = runnerOfJob(input, target.runnerOfJob);
    return runner ? cluster.pods().find((p) => p.metadata.name === runner) : undefined;
  }
  return cluster
    .pods()
    .filter((p) => isRunner(p) && p.metadata.labels?.[SCALE_SET_LABEL] === target.scaleSet)
    .filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded')
    .find((p) => {
      const ready =
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      if (target.state === 'starting') return !ready && Boolean(p.spec.nodeName);
      if (target.state === 'idle')
        return (
          ready &&
          !input.github.runners().some((r) => r.name === p.metadata.name && r.jobId !== null)
        );
      return true;
    });
}

function runnerOfJob(input: CreateClusterInput, jobName: string): string | undefined {
  const job = input.github
    .allJobs()
    .filter((j) => j.name === jobName && j.status === 'in_progress')
    .pop();
  return job?.runnerName ?? undefined;
}

function nodeOfJob(
  cluster: SimCluster,
  input: CreateClusterInput,
  jobName: string,
): string | undefined {
  const runner = runnerOfJob(input, jobName);
  return cluster.pods().find((p) => p.metadata.name === runner)?.spec.nodeName;
}

function runnerPodsOn(cluster: SimCluster, node: string): Pod[] {
  return cluster
    .pods()
    .filter((p) => p.spec.nodeName === node && isRunner(p) && p.status?.phase !== 'Failed');
}

function isRunner(pod: Pod): boolean {
  return pod.metadata.labels?.[RUNNER_LABEL] === 'True';
}

/** The ARC version as sim/kube names it; a clear error when the twin does not model it (yet). */
function modelledArcVersion(cluster: string, version: string): ArcVersion {
  const modelled = ARC_VERSIONS.find((v) => v === version);
  if (!modelled)
    throw new ScenarioError(cluster, [`arcVersion: sim/kube does not model ARC ${version}`]);
  return modelled;
}
