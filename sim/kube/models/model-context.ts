/** What every behaviour model shares: the API, the clock, randomness, timings and a log. */
import type { SimClock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import type { KubeApi } from '../api/kube-api.js';
import type { EventRecorder } from './event-recorder.js';
import type { ModelError } from './work-queue.js';

export interface Timings {
  /** Delay before a controller (ARC, scheduler, kubelet sync) reacts to a change. */
  controllerLatencyMs: number;
  /** Image pull + container start. */
  containerStartMs: number;
  /** From container start until the runner is online (pod Ready). */
  runnerStartupMs: number;
  /** How often an idle runner asks for a job. */
  runnerPollMs: number;
  /** How long a busy runner takes to exit after SIGTERM. */
  runnerShutdownMs: number;
  /** How often the listener reads the scale set's statistics. */
  listenerPollMs: number;
  /** The listener's long poll: an empty message batch after this long without news. */
  listenerEmptyBatchMs: number;
  /** From a runner taking a job until the listener's JobStarted patch. */
  jobStartedLatencyMs: number;
  /** ARC's requeue while GitHub says the runner still runs a job (JobStillRunning). */
  registrationRetryMs: number;
  /** Node lifecycle controller: kubelet silent this long → node Ready=Unknown. */
  nodeMonitorGracePeriodMs: number;
  /** PodGC: pods bound to a deleted node are removed after this quarantine. */
  podGcDelayMs: number;
  /** Cloud node lifecycle: a Node whose instance is gone is deleted after this. */
  nodeDeleteAfterInstanceGoneMs: number;
  /** EC2: spot interruption warning → instance shutting-down. */
  spotWarningMs: number;
  /** EC2: shutting-down → terminated. */
  instanceShutdownMs: number;
  /** Karpenter: launching a replacement node until it is Ready. */
  nodeLaunchMs: number;
  /** Karpenter: eviction retry while a PDB-like guard refuses. */
  evictionRetryMs: number;
  /** Karpenter: reaction to an interruption message (SQS poll). */
  interruptionReactionMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  controllerLatencyMs: 100,
  containerStartMs: 3_000,
  runnerStartupMs: 2_000,
  runnerPollMs: 2_000,
  runnerShutdownMs: 1_000,
  listenerPollMs: 1_000,
  listenerEmptyBatchMs: 50_000,
  jobStartedLatencyMs: 500,
  registrationRetryMs: 30_000,
  nodeMonitorGracePeriodMs: 40_000,
  podGcDelayMs: 40_000,
  nodeDeleteAfterInstanceGoneMs: 30_000,
  spotWarningMs: 120_000,
  instanceShutdownMs: 30_000,
  nodeLaunchMs: 45_000,
  evictionRetryMs: 10_000,
  interruptionReactionMs: 2_000,
};

export interface LogEntry {
  at: number;
  component: string;
  message: string;
  fields?: Record<string, unknown>;
}

export interface ModelContext {
  api: KubeApi;
  clock: SimClock;
  rng: Rng;
  timings: Timings;
  events: EventRecorder;
  errors: ModelError[];
  log: (component: string, message: string, fields?: Record<string, unknown>) => void;
}
