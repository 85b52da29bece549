import { RunnerMedicError } from './errors.js';

/** An event for the bus: runner-medic's observations and audit records. */
export interface BusEvent {
  source: string;
  detailType: string;
  detail: object;
  time?: Date;
}

/** EventBridge's limit for one PutEvents entry. */
export const MAX_ENTRY_BYTES = 256 * 1024;

/** The size EventBridge counts for an entry: Source, DetailType, Detail and Time, in UTF-8. */
export function entrySize(event: BusEvent): number {
  const encoder = new TextEncoder();
  return (
    encoder.encode(event.source).length +
    encoder.encode(event.detailType).length +
    encoder.encode(JSON.stringify(event.detail)).length +
    (event.time ? 14 : 0)
  );
}

/**
 * Events did not reach the bus: `unavailable` when the bus failed them (try again), `refused` for
 * an event the bus can never take (too large).
 */
export class PublishError extends RunnerMedicError {
  readonly failedCount: number;

  constructor(
    message: string,
    failedCount: number,
    options?: { cause?: unknown; kind?: 'unavailable' | 'refused' },
  ) {
    super(options?.kind ?? 'unavailable', message, options);
    this.name = 'PublishError';
    this.failedCount = failedCount;
  }
}

export interface EventPublisher {
  /** Publishes every event or throws PublishError. */
  publish(events: readonly BusEvent[]): Promise<void>;
}
