/** Delivery faults, each a probability in [0, 1] drawn from the simulator's seeded Rng. */
export interface WebhookKnobs {
  /** Base delay between the event and its delivery. @default 0 */
  delayMs: number;
  /** Extra random delay in [0, jitterMs) on every delivery. @default 0 */
  jitterMs: number;
  /** Chance a delivery is never sent (recorded as dropped; redeliver it by GUID). @default 0 */
  drop: number;
  /** Chance a delivery is sent twice with the same `X-GitHub-Delivery`. @default 0 */
  duplicate: number;
  /** Delay of the duplicate after the first copy. @default 5000 */
  duplicateAfterMs: number;
  /** Chance a delivery is held back by up to `reorderWindowMs`, so later events overtake it. @default 0 */
  reorder: number;
  /** @default 30000 */
  reorderWindowMs: number;
  /** Real-time limit on the receiver's answer (GitHub's is 10 s). @default 10000 */
  timeoutMs: number;
}

export const DEFAULT_KNOBS: WebhookKnobs = {
  delayMs: 0,
  jitterMs: 0,
  drop: 0,
  duplicate: 0,
  duplicateAfterMs: 5000,
  reorder: 0,
  reorderWindowMs: 30_000,
  timeoutMs: 10_000,
};
