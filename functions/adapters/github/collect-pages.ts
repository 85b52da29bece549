/** One page of a list endpoint: its items and its `Link` header. */
export interface Page<T> {
  items: T[];
  link: string | undefined;
}

export const PER_PAGE = 100;
const MAX_PAGES = 1000;

/** Reads pages 1, 2, … while GitHub's `Link` header offers a `next` one. */
export async function collectPages<T>(fetchPage: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { items, link } = await fetchPage(page);
    all.push(...items);
    if (!hasNext(link) || items.length === 0) return all;
  }
  throw new Error(`more than ${MAX_PAGES} pages`);
}

function hasNext(link: string | undefined): boolean {
  return link !== undefined && /<[^>]*>;\s*rel="next"/.test(link);
}
