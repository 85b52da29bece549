import type { RunnerView } from '../correlate/correlate.js';
import type { SignalSource } from '../model/loss.js';

/** Signals read from the live object itself: the object is the proof, whatever its age. */
const LIVE_OBJECT_SOURCES: readonly SignalSource[] = [
  'pod-status',
  'pod-condition',
  'container-status',
  'runner-status',
  'listing',
  'node-status',
];

/**
 * When a runner's grace period starts. A loss with a time starts then. A loss without one that
 * came from a live object (an EphemeralRunner in phase Failed carries no time) starts at once, as
 * the object confirms it. A loss without a time from an event is a rumour no one dated: null,
 * it never matures. Events get a time when they are recorded (the bus envelope, the log record),
 * never the epoch, so a genuine one always has a start.
 */
export function graceStart(v: RunnerView): number | null {
  if (v.lostAt !== null) return v.lostAt;
  const source = v.loss?.signal.source;
  return source !== undefined && LIVE_OBJECT_SOURCES.includes(source) ? 0 : null;
}
