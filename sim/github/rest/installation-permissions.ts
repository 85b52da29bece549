import type { AppCredentials } from '../auth/app-credentials.js';
import type { GitHubStore } from '../model/github-store.js';
import type { Installation } from '../model/types.js';

export type PermissionLevel = 'read' | 'write' | 'admin';
export type Permissions = Readonly<Record<string, PermissionLevel>>;

/**
 * What an installation is granted when nobody changed it: what runner-medic's App manifests ask
 * (infra/github-app/manifest-repo.json, a superset of manifest-org.json).
 */
export const APP_PERMISSIONS: Permissions = {
  actions: 'write',
  administration: 'write',
  checks: 'write',
  metadata: 'read',
  organization_self_hosted_runners: 'write',
};

/**
 * Granted permissions differ per installation on GitHub: an org admin accepts a version of the
 * App's permissions, and a change to the App waits for each installation to accept it
 * (docs: "Modifying a GitHub App registration", permission changes need approval). Kept per twin
 * store, by account login.
 */
const granted = new WeakMap<GitHubStore, Map<string, Permissions>>();
const storeOf = new WeakMap<AppCredentials, GitHubStore>();

export function storeOfApp(credentials: AppCredentials): GitHubStore | undefined {
  return storeOf.get(credentials);
}

/** Ties an App's credentials to the store of its twin (done once by the App's routes). */
export function linkApp(credentials: AppCredentials, store: GitHubStore): void {
  storeOf.set(credentials, store);
}

/**
 * Sets what the installation on `accountLogin` has accepted, in the twin whose App has these
 * credentials (`GitHubSim.app`), e.g. `{ ...APP_PERMISSIONS, checks: 'read' }` for an
 * installation that never accepted `checks: write`.
 */
export function setInstallationPermissions(
  credentials: AppCredentials,
  accountLogin: string,
  permissions: Permissions,
): void {
  const store = storeOf.get(credentials);
  if (!store) throw new Error('these App credentials belong to no started twin');
  let byAccount = granted.get(store);
  if (!byAccount) {
    byAccount = new Map();
    granted.set(store, byAccount);
  }
  byAccount.set(accountLogin, { ...permissions });
}

export function permissionsOf(store: GitHubStore, installation: Installation): Permissions {
  return granted.get(store)?.get(installation.account.login) ?? APP_PERMISSIONS;
}

const LEVEL = { read: 1, write: 2, admin: 3 } as const;

export function allows(
  permissions: Permissions,
  permission: string,
  level: PermissionLevel,
): boolean {
  const have = permissions[permission];
  return have !== undefined && LEVEL[have] >= LEVEL[level];
}
