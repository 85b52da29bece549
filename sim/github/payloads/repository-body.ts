import type { Repo } from '../model/types.js';
import type { ApiUrls } from './api-urls.js';
import { isoSeconds } from './api-urls.js';
import { userBody } from './account-body.js';

const URL_TEMPLATES = {
  forks_url: '/forks',
  keys_url: '/keys{/key_id}',
  collaborators_url: '/collaborators{/collaborator}',
  teams_url: '/teams',
  hooks_url: '/hooks',
  issue_events_url: '/issues/events{/number}',
  events_url: '/events',
  assignees_url: '/assignees{/user}',
  branches_url: '/branches{/branch}',
  tags_url: '/tags',
  blobs_url: '/git/blobs{/sha}',
  git_tags_url: '/git/tags{/sha}',
  git_refs_url: '/git/refs{/sha}',
  trees_url: '/git/trees{/sha}',
  statuses_url: '/statuses/{sha}',
  languages_url: '/languages',
  stargazers_url: '/stargazers',
  contributors_url: '/contributors',
  subscribers_url: '/subscribers',
  subscription_url: '/subscription',
  commits_url: '/commits{/sha}',
  git_commits_url: '/git/commits{/sha}',
  comments_url: '/comments{/number}',
  issue_comment_url: '/issues/comments{/number}',
  contents_url: '/contents/{+path}',
  compare_url: '/compare/{base}...{head}',
  merges_url: '/merges',
  archive_url: '/{archive_format}{/ref}',
  downloads_url: '/downloads',
  issues_url: '/issues{/number}',
  pulls_url: '/pulls{/number}',
  milestones_url: '/milestones{/number}',
  notifications_url: '/notifications{?since,all,participating}',
  labels_url: '/labels{/name}',
  releases_url: '/releases{/id}',
  deployments_url: '/deployments',
} as const;

type UrlKey = keyof typeof URL_TEMPLATES;

/** A `minimal-repository` (inside `workflow_run`, and the REST run body). */
export function minimalRepositoryBody(repo: Repo, urls: ApiUrls) {
  const api = `${urls.api}/repos/${repo.fullName}`;
  const templated = {} as Record<UrlKey, string>;
  for (const key of Object.keys(URL_TEMPLATES) as UrlKey[])
    templated[key] = `${api}${URL_TEMPLATES[key]}`;
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: repo.fullName,
    private: true,
    owner: userBody(repo.owner, urls),
    html_url: `${urls.web}/${repo.fullName}`,
    description: null,
    fork: false,
    url: api,
    ...templated,
  };
}

/** The top-level `repository` of a webhook payload. */
export function repositoryBody(repo: Repo, urls: ApiUrls) {
  const created = isoSeconds(repo.createdAt);
  return {
    ...minimalRepositoryBody(repo, urls),
    created_at: created,
    updated_at: created,
    pushed_at: created,
    git_url: `git://github.com/${repo.fullName}.git`,
    ssh_url: `git@github.com:${repo.fullName}.git`,
    clone_url: `${urls.web}/${repo.fullName}.git`,
    svn_url: `${urls.web}/${repo.fullName}`,
    homepage: null,
    size: 1024,
    stargazers_count: 0,
    watchers_count: 0,
    language: 'TypeScript',
    has_issues: true,
    has_projects: true,
    has_downloads: true,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    forks_count: 0,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: 0,
    license: {
      key: 'mit',
      name: 'MIT License',
      spdx_id: 'MIT',
      url: `${urls.api}/licenses/mit`,
      node_id: 'MDc6TGljZW5zZTEz',
    },
    allow_forking: false,
    is_template: false,
    web_commit_signoff_required: false,
    topics: [],
    visibility: 'private',
    forks: 0,
    open_issues: 0,
    watchers: 0,
    default_branch: repo.defaultBranch,
    custom_properties: {},
  };
}
