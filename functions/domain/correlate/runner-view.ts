import type {
  EphemeralRunner,
  EphemeralRunnerJobFields,
  Node,
  Pod,
} from '../model/cluster-facts.js';
import type { JobRecord } from '../model/facts.js';
import type { Loss, NodeSignal, RunnerWarning } from '../model/loss.js';

/** One runner, joined across pod, EphemeralRunner, node, cached job fields, jobs and losses. */
export interface RunnerView {
  cluster: string;
  namespace: string;
  /** pod name == EphemeralRunner name == GitHub runner name */
  name: string;
  scaleSet: string | null;
  pod: Pod | null;
  er: EphemeralRunner | null;
  node: Node | null;
  nodeName: string | null;
  /** The pod was looked up and found missing since then. */
  podMissingSince: number | null;
  /** Passed the runner guard: ARC labels and owner references on every object present. */
  arcOwned: boolean;
  /** ARC ≤ 0.11 (bool `failures`, or version label): it never frees a failed slot itself. */
  legacyArc: boolean;
  /**
   * ARC ≥ 0.15: it deletes a killed runner's EphemeralRunner and pod itself within a second
   * (ephemeralrunner_controller.go `deleteEphemeralRunnerOrPod`, see classifyKilledRunner).
   */
  arcDeletesKilled: boolean;
  jobFields: EphemeralRunnerJobFields | null;
  /** When runner-medic first saw the ER's job fields (from its cache), null if never. */
  jobSeenAt: number | null;
  /**
   * ARC will not free this slot by itself: ARC ≤ 0.11, or the runner had taken a job before it
   * was lost (its JIT config is spent; ARC ≥ 0.12 re-creates a NotFound pod anyway,
   * actions-runner-controller#4588).
   */
  arcWontRecover: boolean;
  runnerId: number | null;
  jobs: JobRecord[];
  /** The runner took a job (ER job fields, or a GitHub job ran on it). */
  busy: boolean;
  losses: Loss[];
  /** The most telling loss, with its deciding signal. */
  loss: Loss | null;
  lostAt: number | null;
  nodeSignals: NodeSignal[];
  warnings: RunnerWarning[];
}

/** A view of a runner known by name only: nothing read, nothing joined, no loss yet. */
export function emptyRunnerView(cluster: string, namespace: string, name: string): RunnerView {
  return {
    cluster,
    namespace,
    name,
    scaleSet: null,
    pod: null,
    er: null,
    node: null,
    nodeName: null,
    podMissingSince: null,
    arcOwned: false,
    legacyArc: false,
    arcDeletesKilled: false,
    jobFields: null,
    jobSeenAt: null,
    arcWontRecover: false,
    runnerId: null,
    jobs: [],
    busy: false,
    losses: [],
    loss: null,
    lostAt: null,
    nodeSignals: [],
    warnings: [],
  };
}
