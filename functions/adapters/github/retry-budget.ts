import type { Octokit } from '@octokit/core';
import { isAuthPath } from './request-failure.js';

export interface RetryBudget {
  remainingTimeMs: () => number;
  reserveMs: number;
  /** plugin-retry's base: its n-th retry waits n² × this. */
  retryBaseMs: number;
}

/**
 * An octokit plugin, listed before plugin-retry, that lets plugin-retry retry a failed request
 * only while its next back-off still fits the time left. An installation-token call is not retried
 * on its own: the call that needed it is, token included, so attempts do not multiply (4 × 4).
 *
 * Every hook of one call sees the same options, and calls made without a `request` option share
 * the client's defaults object, where plugin-retry keeps its count. Token calls (made by
 * auth-app) do share it, so each gateway call passes its own `request` with that state cleared
 * (see `own()`).
 */
export function retryBudget(budget: RetryBudget) {
  return (octokit: Octokit) => {
    octokit.hook.error('request', (error, options) => {
      const request: Record<string, unknown> = options.request ?? {};
      const done = typeof request['retryCount'] === 'number' ? request['retryCount'] : 0;
      const nextWaitMs = (done + 1) ** 2 * budget.retryBaseMs;
      if (
        isAuthPath(String(options.url)) ||
        nextWaitMs + budget.reserveMs > budget.remainingTimeMs()
      ) {
        request['retries'] = 0;
      }
      throw error;
    });
  };
}

/** Per-call `request` options, so retry state (kept there by plugin-retry) never crosses calls. */
export function own(): { request: { retries: undefined; retryCount: undefined } } {
  return { request: { retries: undefined, retryCount: undefined } };
}

/**
 * Per-call `request` options for a call that must not be repeated (a re-run or cancel POST):
 * plugin-retry sends it once; an ambiguous answer is settled by reading the run instead.
 */
export function once(): { request: { retries: 0; retryCount: undefined } } {
  return { request: { retries: 0, retryCount: undefined } };
}
