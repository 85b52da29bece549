import { own } from './retry-budget.js';

/** Items a page of GitHub's lists (its maximum). */
export const PER_PAGE = 100;

/** A list method of octokit (`octokit.rest.…`), as the paginate plugin's iterator takes it. */
type ListMethod = ((options: never) => Promise<unknown>) & { endpoint: unknown; defaults: unknown };

/**
 * The list method with fresh per-call `request` options on every page: the paginate iterator
 * passes on only the method, url and headers of each page, and plugin-retry keeps its count in
 * `request`, which would otherwise be shared with every other call of the client (see own()).
 */
export function ownEachPage<M extends ListMethod>(method: M): M {
  const call = (options: object) => method({ ...options, ...own() } as never);
  // The iterator reads `endpoint` for the first page's URL; the rest of the method is untouched.
  return Object.assign(call, { endpoint: method.endpoint, defaults: method.defaults }) as never;
}

/**
 * A page as GitHub sent it: the paginate plugin lifts the list out of a
 * `{total_count, <key>: [...]}` body and keeps `total_count` on the array; this puts it back, so
 * a bad body is named by GitHub's own paths (`jobs.0.status`).
 */
export function asSent(data: unknown, key: string): unknown {
  if (!Array.isArray(data)) return data;
  const { total_count: totalCount } = data as { total_count?: unknown };
  return { total_count: totalCount, [key]: [...(data as unknown[])] };
}

/** Whether GitHub's `Link` header offers a next page. */
export const hasNextPage = (link: string | undefined): boolean =>
  link !== undefined && /<[^>]*>;\s*rel="next"/.test(link);
