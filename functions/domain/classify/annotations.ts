/** Check-run annotations of a failed job, as GitHub returns them (only the fields read here). */
export interface JobAnnotation {
  annotation_level: string;
  message: string;
  path?: string | null;
  title?: string | null;
}

export type RunnerLossSignal = 'lost-communication' | 'shutdown-signal' | 'os-shutdown';

const LOST = /^The self-hosted runner(?:: .+?)? lost communication with the server\./;
const SHUTDOWN = 'The runner has received a shutdown signal.';
const OS_SHUTDOWN = /^Operating system is shutting down for computer '.*'/;

/** The runner-loss signal in one annotation message, if any. */
export function lossSignalOf(message: string): RunnerLossSignal | null {
  const m = message.trim();
  if (LOST.test(m)) return 'lost-communication';
  if (m.startsWith(SHUTDOWN)) return 'shutdown-signal';
  if (OS_SHUTDOWN.test(m)) return 'os-shutdown';
  return null;
}

/**
 * The first runner-loss signal among a job's annotations, counting only `failure`-level ones.
 * null means the job failed for its own reasons: a genuine failure, never re-run.
 */
export function findRunnerLoss(
  annotations: readonly JobAnnotation[],
): { signal: RunnerLossSignal; message: string } | null {
  for (const a of annotations) {
    if (a.annotation_level !== 'failure') continue;
    const signal = lossSignalOf(a.message);
    if (signal) return { signal, message: a.message };
  }
  return null;
}
