import type { JobRecord } from '../model/facts.js';
import type { RunnerView } from './runner-view.js';
import type { RememberedRunner } from './runners-on-nodes.js';

/** Jobs, runners and their objects joined (correlate.ts), with the indexes the joins use. */
export interface Correlation {
  runners: RunnerView[];
  /** Runners on signalled nodes known from the store only (no object read in this slice). */
  remembered: RememberedRunner[];
  /** Runner views by name, in every cluster and namespace: candidates, never an identity. */
  byName: Map<string, RunnerView[]>;
  /** Runner views by GitHub runner id (the EphemeralRunner's `status.runnerId`). */
  byRunnerId: Map<number, RunnerView[]>;
  /** Runner views with EphemeralRunner job fields, keyed by `runKey(jobRepositoryName, workflowRunId)`. */
  byErRun: Map<string, RunnerView[]>;
  /** Runners grouped by scale-set name, in every cluster. */
  byScaleSet: Map<string, RunnerView[]>;
  /** Jobs of a run, keyed by `runKey(repo, runId)`. */
  jobsByRun: Map<string, JobRecord[]>;
}

export const runKey = (repo: string, runId: number): string => `${repo}#${runId}`;

/** One attempt of a run: `runKey` and the attempt's number. */
export const runAttemptKey = (repo: string, runId: number, runAttempt: number): string =>
  `${runKey(repo, runId)}#${runAttempt}`;
