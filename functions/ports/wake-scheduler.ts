/** Wakes the engine at a time (an SQS delay queue in AWS, the simulated clock in scenarios). */
export interface WakeScheduler {
  wakeAt(at: number): Promise<void>;
}
