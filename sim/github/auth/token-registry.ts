import type { IdSource } from '../model/id-source.js';
import type { Actor, Installation } from '../model/types.js';

export type Principal =
  | {
      kind: 'installation';
      token: string;
      installation: Installation;
      by: Actor;
      expiresAt: number;
    }
  | { kind: 'user'; token: string; login: string; by: Actor };

/**
 * Access tokens the simulator has issued. Installation tokens carry a sim-time `expires_at` but are
 * not refused after it: @octokit/auth-app caches them by wall-clock time, which the sim clock outruns.
 */
export class TokenRegistry {
  private readonly tokens = new Map<string, Principal>();

  constructor(private readonly ids: IdSource) {}

  issueInstallationToken(
    installation: Installation,
    nowMs: number,
    by: Actor = 'runner-medic',
  ): Principal & { kind: 'installation' } {
    const principal = {
      kind: 'installation' as const,
      token: this.ids.token('ghs'),
      installation,
      by,
      expiresAt: nowMs + 3_600_000,
    };
    this.tokens.set(principal.token, principal);
    return principal;
  }

  issueUserToken(login: string, by: Actor = 'user'): string {
    const token = this.ids.token('ghp');
    this.tokens.set(token, { kind: 'user', token, login, by });
    return token;
  }

  lookup(token: string): Principal | undefined {
    return this.tokens.get(token);
  }
}
