import type { GithubMutation } from '../../ports/github-gateway.js';
import {
  isAuthPath,
  isRateLimit,
  requestFailureOf,
  unavailableOrRequestError,
} from './request-failure.js';

/**
 * How GitHub refused a mutating call, as a typed outcome. Throws GithubUnavailableError (network,
 * 5xx, rate limit) or GithubRequestError (401, 400, a failed token call…) for the rest.
 */
export function refusalOutcome(error: unknown, what: string, nowMs: number): GithubMutation {
  const failure = requestFailureOf(error);
  if (!failure || isAuthPath(failure.path) || isRateLimit(failure)) {
    throw unavailableOrRequestError(error, what, nowMs);
  }
  const message = failure.message;
  switch (failure.status) {
    case 403:
      return /already running/i.test(message)
        ? { result: 'already-running', message }
        : { result: 'refused', message };
    case 404:
      return { result: 'not-found', message };
    case 409:
      return { result: 'conflict', message };
    case 422:
      return { result: 'busy', message };
    default:
      throw unavailableOrRequestError(error, what, nowMs);
  }
}
