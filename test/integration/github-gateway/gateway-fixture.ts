import type { GithubGatewayOptions } from '../../../functions/adapters/github/github-gateway.js';
import { OctokitGithubGateway } from '../../../functions/adapters/github/github-gateway.js';
import type { GitHubSim } from '../../../sim/github/github-sim.js';

export const quietLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A Lambda's remaining time, set by each test. */
export class Budget {
  constructor(public ms = 60_000) {}
  readonly remaining = () => this.ms;
}

/**
 * The real gateway against the simulator. Only the waits are shrunk so no test sleeps: plugin-retry
 * waits n² ms instead of n² s, a `retry-after` second lasts 1 ms (the decision to wait still counts
 * real seconds against the budget), and writes are not spaced 1 s apart.
 */
export function gatewayFor(
  sim: GitHubSim,
  budget = new Budget(),
  options: Partial<GithubGatewayOptions> = {},
): OctokitGithubGateway {
  return new OctokitGithubGateway({
    baseUrl: sim.baseUrl,
    appId: sim.app.appId,
    privateKey: sim.app.privateKey,
    remainingTimeMs: budget.remaining,
    retryBaseMs: 1,
    rateLimitSecondMs: 1,
    writeSpacingMs: 0,
    log: quietLog,
    ...options,
  });
}

/** Requests the simulator served since `from`, as `METHOD path status`; App (JWT) calls only if asked. */
export function served(sim: GitHubSim, from = 0, withAppCalls = false): string[] {
  return sim
    .requests()
    .slice(from)
    .filter((r) => withAppCalls || !r.path.startsWith('/app'))
    .map((r) => `${r.method} ${r.path} ${r.status}`);
}
