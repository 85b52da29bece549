import { RunnerMedicError } from '../../ports/errors.js';
import { GithubUnavailableError } from '../../ports/github-gateway.js';

/** A rate limit we could not wait out in the time left; `retryAfterMs` is GitHub's advice. */
export class GithubRateLimitedError extends GithubUnavailableError {
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GithubRateLimitedError';
  }
}

/**
 * GitHub answered in a way no retry fixes: bad credentials, the App not installed, a missing
 * permission, or a status this call never expects.
 */
export class GithubRequestError extends RunnerMedicError {
  constructor(
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super('refused', message, options);
    this.name = 'GithubRequestError';
  }
}

/** A 2xx body that does not have the shape runner-medic reads. */
export class GithubResponseError extends RunnerMedicError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad-response', message, options);
    this.name = 'GithubResponseError';
  }
}
