import type { BusEvent, EventPublisher } from '../../ports/event-publisher.js';

export interface LineWriter {
  write(line: string): unknown;
}

/** The local sink: one JSON line per event, in EventBridge's own envelope field names. */
export class StreamPublisher implements EventPublisher {
  constructor(
    private readonly out: LineWriter,
    private readonly clock: { now(): number },
  ) {}

  async publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) {
      const time = event.time ?? new Date(this.clock.now());
      this.out.write(
        `${JSON.stringify({
          source: event.source,
          'detail-type': event.detailType,
          time: time.toISOString(),
          detail: event.detail,
        })}\n`,
      );
    }
  }
}
