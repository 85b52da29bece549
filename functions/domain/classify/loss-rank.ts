import type { Loss, LossKind } from '../model/loss.js';

/** Causes from the most telling to the least, to pick a runner's main loss. */
const CAUSE_ORDER: LossKind[] = [
  'node-pressure-eviction',
  'admission-reject',
  'kubelet-shutdown',
  'oom-killed',
  'api-eviction',
  'preemption',
  'taint-manager',
  'pod-gc',
  'node-not-ready',
  'pod-not-found',
  'runner-failed',
  'runner-stuck',
];

export function lossRank(l: Loss): number {
  const base = CAUSE_ORDER.indexOf(l.cause.kind) * 2;
  // An eviction whose initiator is known tells more than one whose initiator is not.
  return l.cause.kind === 'api-eviction' && l.cause.by === 'unknown' ? base + 1 : base;
}
