import type { Result } from '../../domain/model/result.js';
import { statusCodeOf } from './kube-errors.js';

export interface ListPage {
  items: unknown[];
  /** The continue token, if more pages follow. */
  next: string | undefined;
}

/** Reads `items` and `metadata.continue` from a list body (custom objects come untyped). */
export function pageOf(body: unknown): ListPage {
  if (typeof body !== 'object' || body === null) return { items: [], next: undefined };
  const { items, metadata } = body as { items?: unknown; metadata?: Record<string, unknown> };
  const token = metadata?.continue ?? metadata?._continue;
  return {
    items: Array.isArray(items) ? (items as unknown[]) : [],
    next: typeof token === 'string' && token !== '' ? token : undefined,
  };
}

/**
 * Follows `continue` tokens to the end. A 410 (the token outlived etcd's compaction) restarts
 * the listing once from the first page, as the API server asks.
 */
export async function listAll(
  fetchPage: (next: string | undefined) => Promise<ListPage>,
): Promise<unknown[]> {
  for (let attempt = 0; ; attempt++) {
    const items: unknown[] = [];
    let next: string | undefined;
    try {
      do {
        const page = await fetchPage(next);
        items.push(...page.items);
        next = page.next;
      } while (next);
      return items;
    } catch (e) {
      if (attempt > 0 || next === undefined || statusCodeOf(e) !== 410) throw e;
    }
  }
}

/** Parses each item, skipping (and reporting) the ones the parser refuses. */
export function parseEach<T>(
  items: unknown[],
  parse: (raw: unknown) => Result<T>,
  onSkip: (reason: string) => void,
): T[] {
  const out: T[] = [];
  for (const raw of items) {
    const r = parse(raw);
    if (r.ok) out.push(r.value);
    else onSkip(r.reason);
  }
  return out;
}
