import { lossKindSchema, type Loss } from '../model/loss.js';

/** A runner's main loss is its most telling: the first in `lossKindSchema`'s order. */
export function lossRank(l: Loss): number {
  const base = lossKindSchema.options.indexOf(l.cause.kind) * 2;
  // An eviction whose initiator is known tells more than one whose initiator is not.
  return l.cause.kind === 'api-eviction' && l.cause.by === 'unknown' ? base + 1 : base;
}
