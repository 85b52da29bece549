import type { Account } from '../model/types.js';
import type { ApiUrls } from './api-urls.js';

/** A `simple-user` (sender, owner, actor). */
export function userBody(account: Account, urls: ApiUrls) {
  const api = `${urls.api}/users/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: account.nodeId,
    avatar_url: `https://avatars.githubusercontent.com/u/${account.id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url: `${urls.web}/${account.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: account.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

/** The `organization` block of a webhook payload. */
export function organizationBody(account: Account, urls: ApiUrls) {
  const api = `${urls.api}/orgs/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: account.nodeId,
    url: api,
    repos_url: `${api}/repos`,
    events_url: `${api}/events`,
    hooks_url: `${api}/hooks`,
    issues_url: `${api}/issues`,
    members_url: `${api}/members{/member}`,
    public_members_url: `${api}/public_members{/member}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${account.id}?v=4`,
    description: '',
  };
}
