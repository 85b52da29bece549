import { GithubUnavailableError } from '../../ports/github-gateway.js';
import { GithubRateLimitedError, GithubRequestError } from './github-errors.js';

/** What runner-medic reads of an octokit `RequestError`. */
export interface RequestFailure {
  status: number;
  /** GitHub's `message`, or the error's own when the body has none. */
  message: string;
  headers: Record<string, unknown>;
  /** Path of the request that failed (it may be the installation-token call). */
  path: string;
}

/** The failure in an octokit error, or undefined for anything that is not a request error. */
export function requestFailureOf(error: unknown): RequestFailure | undefined {
  if (!(error instanceof Error) || !('status' in error) || typeof error.status !== 'number') {
    return undefined;
  }
  const response = field(error, 'response');
  const data = field(response, 'data');
  const bodyMessage = field(data, 'message');
  const headers = field(response, 'headers');
  const url = field(field(error, 'request'), 'url');
  return {
    status: error.status,
    message: typeof bodyMessage === 'string' ? bodyMessage : error.message,
    headers: isRecord(headers) ? headers : {},
    path: typeof url === 'string' ? pathOf(url) : '',
  };
}

export function isRateLimit(failure: RequestFailure): boolean {
  if (failure.status === 429) return true;
  return (
    failure.status === 403 &&
    (String(failure.headers['x-ratelimit-remaining']) === '0' ||
      /\brate limit\b/i.test(failure.message))
  );
}

/** The auth-app calls made before the real one: a failure there says nothing about the target. */
export function isAuthPath(path: string): boolean {
  return (
    /\/app\/installations\/[^/]+\/access_tokens$/.test(path) ||
    /\/(?:orgs\/[^/]+|repos\/[^/]+\/[^/]+)\/installation$/.test(path)
  );
}

/**
 * The typed error for a request failure that is no answer about the target: network, 5xx after
 * the retries, a rate limit the throttle handlers declined to wait for (GithubUnavailableError),
 * or a status no retry fixes (GithubRequestError). Anything else (a bad id, a bad key) is returned
 * as it is: it is no GitHub outage.
 */
export function unavailableOrRequestError(error: unknown, what: string, nowMs: number): unknown {
  const failure = requestFailureOf(error);
  if (!failure) return error;
  const text = `${what}: ${failure.status} ${failure.message}`;
  if (isRateLimit(failure)) {
    return new GithubRateLimitedError(text, retryAfterMs(failure, nowMs), { cause: error });
  }
  if (failure.status >= 500) return new GithubUnavailableError(text, { cause: error });
  return new GithubRequestError(text, failure.status, { cause: error });
}

function retryAfterMs(failure: RequestFailure, nowMs: number): number | null {
  const retryAfter = Number(failure.headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter > 0) return retryAfter * 1000;
  const reset = Number(failure.headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - nowMs);
  return null;
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://github.invalid').pathname;
  } catch {
    return url;
  }
}
