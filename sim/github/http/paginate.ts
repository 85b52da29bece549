import type { RequestContext } from './route.js';

/** Slices `items` by `per_page` (max 100, default 30) and `page`, with GitHub's `Link` header. */
export function paginate<T>(
  ctx: RequestContext,
  items: T[],
): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 30) || 30));
  const pageNumber = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const page = items.slice((pageNumber - 1) * perPage, pageNumber * perPage);
  const link = (n: number, rel: string) => {
    const query = new URLSearchParams(ctx.query);
    query.set('per_page', String(perPage));
    query.set('page', String(n));
    return `<${ctx.baseUrl}${ctx.path}?${query.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (pageNumber > 1) links.push(link(pageNumber - 1, 'prev'));
  if (pageNumber < last) links.push(link(pageNumber + 1, 'next'), link(last, 'last'));
  if (pageNumber > 1) links.push(link(1, 'first'));
  return { page, headers: links.length > 0 ? { link: links.join(', ') } : {} };
}
