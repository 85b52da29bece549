import type { RateLimiter } from '../http/rate-limiter.js';
import type { Route } from '../http/route.js';

/** `GET /rate_limit`: the caller's core budget; it does not count against it. */
export function rateLimitRoute(
  limiter: RateLimiter,
  defaultLimit: number,
  now: () => number,
): Route {
  return {
    method: 'GET',
    path: '/rate_limit',
    auth: 'token',
    handler: (ctx) => {
      const principal = ctx.principal;
      const key =
        principal?.kind === 'installation'
          ? `installation ${principal.installation.id}`
          : `user ${principal?.login ?? ''}`;
      const window = limiter.peek(key);
      const live = window && window.resetAt > now() ? window : undefined;
      const core = {
        limit: live?.limit ?? defaultLimit,
        used: Math.min(live?.used ?? 0, live?.limit ?? defaultLimit),
        remaining: Math.max(0, (live?.limit ?? defaultLimit) - (live?.used ?? 0)),
        reset: Math.ceil((live?.resetAt ?? now() + 3_600_000) / 1000),
        resource: 'core',
      };
      return { status: 200, body: { resources: { core }, rate: core } };
    },
  };
}
