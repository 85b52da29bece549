import * as z from 'zod';
import { githubId as id, githubRunSchema } from '../../domain/model/github-objects.js';
import type { RepositoryRef } from '../../domain/model/observation.js';

/** `GET /installation/repositories`: one page. */
export const installationReposPageSchema = z.object({
  total_count: z.number().int().nonnegative(),
  repositories: z.array(
    z.object({
      id,
      name: z.string().min(1).max(100),
      full_name: z.string().min(3).max(140),
      owner: z.object({ login: z.string().min(1).max(39) }),
    }),
  ),
});

/** `GET /repos/{owner}/{repo}/actions/runs`: one page. */
export const runsPageSchema = z.object({
  total_count: z.number().int().nonnegative(),
  workflow_runs: z.array(githubRunSchema),
});

export function toRepositoryRef(
  repo: z.output<typeof installationReposPageSchema>['repositories'][number],
): RepositoryRef {
  return { id: repo.id, fullName: repo.full_name, owner: repo.owner.login, name: repo.name };
}
