/** The EventBridge `source` of a wake-up, on the bus or in a delayed SQS message. */
export const WAKE_SOURCE = 'runner-medic.wake';

/** Wakes the engine at a time (an SQS delay queue in AWS, the simulated clock in scenarios). */
export interface WakeScheduler {
  wakeAt(at: number): Promise<void>;
}
