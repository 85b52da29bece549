import type { Loss, NodeSignal } from '../model/loss.js';

/**
 * An API eviction names no initiator. If the pod's node carried a Karpenter, node termination
 * handler or spot warning, that is who evicted it.
 */
export function attributeEviction(loss: Loss, nodeSignals: readonly NodeSignal[]): Loss {
  if (loss.cause.kind !== 'api-eviction') return loss;
  // Karpenter drains an interrupted spot node too; its eviction text then says "Forceful…".
  if (loss.cause.by === 'karpenter') {
    const spot = nodeSignals.find((s) => s.kind === 'spot-interruption-warning');
    if (!spot) return loss;
    return {
      ...loss,
      cause: { ...loss.cause, by: 'spot-interruption' },
      signal: {
        source: loss.signal.source,
        detail: `${loss.signal.detail}; node: ${spot.signal.detail}`,
      },
    };
  }
  if (loss.cause.by !== 'unknown') return loss;
  const kinds = new Set(nodeSignals.map((s) => s.kind));
  const by = kinds.has('spot-interruption-warning')
    ? 'spot-interruption'
    : kinds.has('karpenter-disruption')
      ? 'karpenter'
      : kinds.has('nth-drain')
        ? 'node-termination-handler'
        : null;
  if (!by) return loss;
  const decidedBy = nodeSignals.find((s) =>
    by === 'spot-interruption'
      ? s.kind === 'spot-interruption-warning'
      : by === 'karpenter'
        ? s.kind === 'karpenter-disruption'
        : s.kind === 'nth-drain',
  );
  return {
    ...loss,
    cause: { kind: 'api-eviction', by, karpenterReason: null },
    signal: {
      source: loss.signal.source,
      detail: `${loss.signal.detail}; node: ${decidedBy?.signal.detail ?? by}`,
    },
  };
}
