/** Primary rate limit: a budget per token owner per hour of simulated time. */
export interface RateWindow {
  limit: number;
  used: number;
  /** Sim ms when the window resets. */
  resetAt: number;
}

const HOUR_MS = 3_600_000;

export class RateLimiter {
  private readonly windows = new Map<string, RateWindow>();

  constructor(private readonly defaultLimit: number) {}

  /** Counts one request for `key`; returns the window after it (used > limit means refused). */
  take(key: string, nowMs: number, limit = this.defaultLimit): RateWindow {
    let window = this.windows.get(key);
    if (!window || nowMs >= window.resetAt) {
      window = { limit, used: 0, resetAt: nowMs + HOUR_MS };
      this.windows.set(key, window);
    }
    window.used += 1;
    return window;
  }

  /** Spends the rest of a window, so the next requests hit the primary limit. */
  exhaust(key: string, nowMs: number, limit = this.defaultLimit): void {
    const window = this.take(key, nowMs, limit);
    window.used = window.limit;
  }

  peek(key: string): RateWindow | undefined {
    return this.windows.get(key);
  }
}

export function rateHeaders(window: RateWindow): Record<string, string> {
  return {
    'x-ratelimit-limit': String(window.limit),
    'x-ratelimit-remaining': String(Math.max(0, window.limit - window.used)),
    'x-ratelimit-used': String(Math.min(window.used, window.limit)),
    'x-ratelimit-reset': String(Math.ceil(window.resetAt / 1000)),
    'x-ratelimit-resource': 'core',
  };
}
