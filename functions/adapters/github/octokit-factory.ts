import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/core';
import { paginateRest } from '@octokit/plugin-paginate-rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
// The light build, the one plugin-throttling imports: the default one adds Redis clustering
// (82 KB minified) and would be a second copy of Bottleneck in the bundle.
import Bottleneck from 'bottleneck/light.js';
import { gatewayRest } from './gateway-rest.js';
import type { RetryBudget } from './retry-budget.js';
import { retryBudget } from './retry-budget.js';
import { RunnerMedicError } from '../../ports/errors.js';
import type { RateLimitBook } from './rate-limit-book.js';
import type { Clock } from '../../ports/clock.js';

/** Octokit with runner-medic's plugins, in this order (see retry-budget.ts). */
function gatewayOctokit(budget: RetryBudget) {
  return Octokit.plugin(retryBudget(budget), gatewayRest, paginateRest, retry, throttling);
}
export type GatewayOctokit = InstanceType<ReturnType<typeof gatewayOctokit>>;

/** plugin-retry's list plus 409 (a cancel of a completed run) and 429 (the throttle's job). */
const DO_NOT_RETRY = [400, 401, 403, 404, 409, 410, 422, 429, 451];

interface OctokitLog {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

export interface OctokitFactoryOptions {
  /** `https://api.github.com`, a GHES `https://HOST/api/v3`, or the simulator. */
  baseUrl: string;
  appId: number | string;
  /** The App's private key (PEM). */
  privateKey: string;
  /** Time left in this invocation (Lambda's `getRemainingTimeInMillis`). */
  remainingTimeMs: () => number;
  /** Kept free after a retry or rate-limit wait, for the call and the rest. @default 5000 */
  reserveMs?: number;
  /** How often one request may wait out a rate limit. @default 1 */
  rateLimitRetries?: number;
  /** plugin-retry's retries of 5xx and network errors (fewer when time runs short). @default 3 */
  retries?: number;
  /** plugin-retry's base: the n-th retry waits n² × this. @default 1000 */
  retryBaseMs?: number;
  /**
   * Real ms waited per second of `retry-after` (plugin-throttling's `retryAfterBaseValue`).
   * Whether a wait fits is always judged in real seconds; tests only shrink the wait. @default 1000
   */
  rateLimitSecondMs?: number;
  /** Spacing of mutating calls per installation. @default plugin-throttling's (1 s, GitHub's advice) */
  writeSpacingMs?: number;
  /** Abort one HTTP exchange after this long; it counts as a network error. @default 10000 */
  requestTimeoutMs?: number;
  /** `request.fetch`. @default globalThis.fetch */
  fetch?: typeof fetch;
  log?: OctokitLog;
  userAgent?: string;
  /** Told the rate-limit headers of every installation answer (errors included). */
  rateLimits?: Pick<RateLimitBook, 'note'>;
  /**
   * With a clock, an installation whose token GitHub refused (403: suspended; 404: uninstalled)
   * is not asked for one again for REFUSED_TOKEN_MS: its calls fail at once, without an App call.
   */
  clock?: Clock;
}

/**
 * How long a refused installation token is taken as the answer. A suspended installation is
 * lifted by a person in GitHub's settings; its org is reported each sweep meanwhile
 * (`InstallationUnavailable`), and would otherwise cost two App calls a sweep.
 */
export const REFUSED_TOKEN_MS = 15 * 60_000;

/** One octokit per App installation (its token cached by auth-app), and one as the App itself. */
export class OctokitFactory {
  private readonly installations = new Map<number, GatewayOctokit>();
  /** Installations whose token GitHub refused: the refusal, and until when it stands. */
  private readonly refused = new Map<number, { error: unknown; until: number }>();
  private appClient: GatewayOctokit | undefined;
  private readonly write: Bottleneck.Group | undefined;
  private readonly Client: ReturnType<typeof gatewayOctokit>;

  constructor(private readonly options: OctokitFactoryOptions) {
    if (!options.baseUrl) throw new RunnerMedicError('config', 'baseUrl is required');
    if (!options.appId) throw new RunnerMedicError('config', 'appId is required');
    if (!options.privateKey) throw new RunnerMedicError('config', 'privateKey is required');
    this.write =
      options.writeSpacingMs === undefined
        ? undefined
        : new Bottleneck.Group({ maxConcurrent: 1, minTime: options.writeSpacingMs });
    this.Client = gatewayOctokit({
      remainingTimeMs: options.remainingTimeMs,
      reserveMs: options.reserveMs ?? 5000,
      retryBaseMs: options.retryBaseMs ?? 1000,
    });
  }

  forInstallation(installationId: number): GatewayOctokit {
    let octokit = this.installations.get(installationId);
    if (!octokit) {
      octokit = this.create(`installation-${installationId}`, installationId);
      this.installations.set(installationId, octokit);
    }
    return octokit;
  }

  /** Authenticates as the App (JWT): installation look-ups. */
  forApp(): GatewayOctokit {
    this.appClient ??= this.create('app', undefined);
    return this.appClient;
  }

  private create(throttleId: string, installationId: number | undefined): GatewayOctokit {
    const o = this.options;
    const limitHandler = (retryAfterS: number, _request: unknown, _octokit: unknown, n: number) =>
      n < (o.rateLimitRetries ?? 1) &&
      retryAfterS * 1000 + (o.reserveMs ?? 5000) <= o.remainingTimeMs();
    const octokit = new this.Client({
      baseUrl: o.baseUrl.replace(/\/+$/, ''),
      userAgent: o.userAgent ?? 'runner-medic',
      authStrategy: createAppAuth,
      auth: {
        appId: o.appId,
        privateKey: o.privateKey,
        ...(installationId === undefined ? {} : { installationId }),
      },
      request: { fetch: timedFetch(o.fetch ?? globalThis.fetch, o.requestTimeoutMs ?? 10_000) },
      retry: {
        doNotRetry: DO_NOT_RETRY,
        retries: o.retries ?? 3,
        retryAfterBaseValue: o.retryBaseMs ?? 1000,
      },
      throttle: {
        id: throttleId,
        onRateLimit: limitHandler,
        onSecondaryRateLimit: limitHandler,
        retryAfterBaseValue: o.rateLimitSecondMs ?? 1000,
        ...(this.write ? { write: this.write } : {}),
      },
      ...(o.log ? { log: o.log } : {}),
    });
    const clock = o.clock;
    if (clock && installationId !== undefined)
      octokit.hook.wrap('request', async (request, options) => {
        const refused = this.refused.get(installationId);
        if (refused && clock.now() < refused.until) throw refused.error;
        try {
          return await request(options);
        } catch (error) {
          if (isRefusedToken(error))
            this.refused.set(installationId, { error, until: clock.now() + REFUSED_TOKEN_MS });
          throw error;
        }
      });
    const book = o.rateLimits;
    if (book && installationId !== undefined) {
      octokit.hook.after('request', (response) => book.note(installationId, response.headers));
      octokit.hook.error('request', (error) => {
        const headers = (error as { response?: { headers?: Record<string, string> } }).response
          ?.headers;
        if (headers) book.note(installationId, headers);
        throw error;
      });
    }
    return octokit;
  }
}

function timedFetch(base: typeof fetch, timeoutMs: number): typeof fetch {
  return (input, init) =>
    base(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
}

/** GitHub refused an installation token: the installation is suspended (403) or gone (404). */
function isRefusedToken(error: unknown): boolean {
  const e = error as { status?: unknown; request?: { url?: unknown } };
  return (
    (e.status === 403 || e.status === 404) &&
    typeof e.request?.url === 'string' &&
    /\/app\/installations\/\d+\/access_tokens$/.test(e.request.url)
  );
}
