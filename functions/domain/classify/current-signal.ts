import type { Node } from '../model/cluster-facts.js';
import type { NodeSignal } from '../model/loss.js';

/** A warning (spot, Karpenter, drain) older than this has either happened or been called off. */
export const WARNING_TTL_MS = 15 * 60_000;

/**
 * Whether a stored node signal still holds. The node object, when known, outranks an old event:
 * a node that is Ready and not deleting now is back. Warnings expire after WARNING_TTL_MS.
 */
export function isCurrentSignal(s: NodeSignal, node: Node | null, now: number): boolean {
  if (s.kind === 'node-not-ready' || s.kind === 'node-gone') {
    if (!node) return true;
    const ready = node.conditions.find((c) => c.type === 'Ready');
    return ready?.status !== 'True' || node.deletionTimestamp !== null;
  }
  return s.at === null || now - s.at <= WARNING_TTL_MS;
}
