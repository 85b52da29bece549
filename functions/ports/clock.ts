/** Time as runner-medic's code reads it: injected, so simulations drive the real code. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
