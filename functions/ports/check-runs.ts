import type { RepoRef } from './github-gateway.js';

/** The check run runner-medic leaves on a job's commit to explain what it did. */
export const CHECK_RUN_NAME = 'runner-medic';

/** What a workflow run's commit and page are, for a check run about it. */
export interface RunHead {
  headSha: string;
  /** The run's page on GitHub. */
  htmlUrl: string;
}

export interface CheckRunRequest {
  ref: RepoRef;
  headSha: string;
  /** The action's idempotency key: one check run per action, found again by it after a crash. */
  externalId: string;
  title: string;
  /** Markdown. */
  summary: string;
  /** The run's page, the check run's "details" link. */
  detailsUrl: string;
  /** Epoch ms. */
  completedAt: number;
}

/** A `runner-medic` check run as GitHub holds it. */
export interface PublishedCheckRun {
  id: number;
  /** false: a check run with this external id was already on the commit; nothing was created. */
  created: boolean;
}

/** GitHub's Checks API, as runner-medic uses it to explain its actions (needs `checks: write`). */
export interface CheckRunPublisher {
  /** The run's head commit and page; null when the run is gone (404). */
  runHead(ref: RepoRef, runId: number): Promise<RunHead | null>;
  /**
   * Creates a completed, `neutral` check run named `runner-medic` on the commit, unless one with
   * the same external id is already there (then it is returned, and nothing is created).
   */
  publish(request: CheckRunRequest): Promise<PublishedCheckRun>;
}
