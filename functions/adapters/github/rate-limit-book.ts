import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../../ports/clock.js';

/**
 * Why a GitHub call is made: `act` (a re-run, cancel, delete, check run: remediation itself) or
 * `observe` (the sweep's reads). Observe calls spend a bounded share of an installation's hourly
 * rate limit; act calls are never held back by it.
 */
type CallPurpose = 'act' | 'observe';

const purpose = new AsyncLocalStorage<CallPurpose>();
const HOUR_MS = 3_600_000;
/** Observe calls a window allows at once, before its share has accrued. */
const OBSERVE_BURST = 10;

/** One installation's primary rate-limit window, as GitHub's last answer stated it. */
interface RateWindow {
  limit: number;
  remaining: number;
  /** Epoch ms when the window resets (`x-ratelimit-reset`). */
  resetAt: number;
  /** Observe calls made in this window. */
  observed: number;
}

type Headers = Record<string, string | number | undefined>;

/**
 * The rate limit of each installation, read from the `x-ratelimit-limit`, `-remaining` and
 * `-reset` headers of every answer (docs.github.com, "Rate limits for the REST API": checking
 * the headers), and the observe calls counted against it. Kept per container: a cold container
 * learns the window again from `GET /rate_limit`, which does not count against the limit.
 */
export class RateLimitBook {
  private readonly windows = new Map<number, RateWindow>();

  constructor(
    /** Share of the hourly limit observe calls may spend (0.05: 5%). */
    private readonly share: number,
    private readonly clock: Clock,
  ) {}

  /** Runs `call` tagged as an observe call (the request hooks count it). */
  static observing<T>(call: () => Promise<T>): Promise<T> {
    return purpose.run('observe', call);
  }

  /** Notes an answer's rate-limit headers for an installation and counts an observe call. */
  note(installationId: number, headers: Headers): void {
    const limit = Number(headers['x-ratelimit-limit']);
    const remaining = Number(headers['x-ratelimit-remaining']);
    const reset = Number(headers['x-ratelimit-reset']);
    const counted = purpose.getStore() === 'observe' ? 1 : 0;
    const was = this.current(installationId);
    if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset)) {
      if (was) was.observed += counted;
      return;
    }
    const observed = (was?.observed ?? 0) + counted;
    this.windows.set(installationId, { limit, remaining, resetAt: reset * 1000, observed });
  }

  /**
   * Counts a read made for the observe share outside the request hooks: `GET /rate_limit`, free
   * at GitHub, is still a call the sweep made, so the share bounds every call it makes.
   */
  countObserve(installationId: number): void {
    const w = this.current(installationId);
    if (w) w.observed++;
  }

  /** The window in force, or undefined when none is known or it has reset since. */
  current(installationId: number): RateWindow | undefined {
    const w = this.windows.get(installationId);
    return w && w.resetAt > this.clock.now() ? w : undefined;
  }

  /**
   * Whether one more observe call fits the installation's share (false while nothing is known).
   * The share accrues over the hour (plus a small burst), so sweeps spend it evenly instead of
   * all in the window's first minutes.
   */
  allowsObserve(installationId: number): boolean {
    const w = this.current(installationId);
    if (!w || w.remaining <= 0) return false;
    const share = Math.floor(this.share * w.limit);
    const elapsed = Math.min(HOUR_MS, Math.max(0, HOUR_MS - (w.resetAt - this.clock.now())));
    const accrued = OBSERVE_BURST + Math.ceil((share * elapsed) / HOUR_MS);
    return w.observed < Math.min(share, accrued);
  }

  /** Percent of the hourly limit used, by every caller of the installation; null when unknown. */
  usedPercent(installationId: number): number | null {
    const w = this.current(installationId);
    if (!w || w.limit <= 0) return null;
    return Math.round(((w.limit - w.remaining) / w.limit) * 1000) / 10;
  }
}
