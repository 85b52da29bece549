import type { EventBridgeClient, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { BusEvent, EventPublisher } from '../../ports/event-publisher.js';
import { MAX_ENTRY_BYTES, PublishError, entrySize } from '../../ports/event-publisher.js';

export interface EventBridgePublisherOptions {
  busName: string;
  /** Attempts for entries EventBridge reports in FailedEntryCount. @default 3 */
  maxAttempts?: number;
  /** Waits between attempts; injected so tests do not sleep. */
  sleep?: (ms: number) => Promise<void>;
}

const BATCH_SIZE = 10;

/** PutEvents in batches of ten, retrying only the entries EventBridge reports as failed. */
export class EventBridgePublisher implements EventPublisher {
  private readonly maxAttempts: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly client: EventBridgeClient,
    private readonly options: EventBridgePublisherOptions,
  ) {
    this.maxAttempts = options.maxAttempts ?? 3;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) {
      if (entrySize(event) > MAX_ENTRY_BYTES) {
        throw new PublishError(`${event.detailType} exceeds ${MAX_ENTRY_BYTES} bytes`, 1, {
          kind: 'refused',
        });
      }
    }
    for (let i = 0; i < events.length; i += BATCH_SIZE) {
      await this.publishBatch(events.slice(i, i + BATCH_SIZE).map((e) => this.toEntry(e)));
    }
  }

  private async publishBatch(entries: PutEventsRequestEntry[]): Promise<void> {
    let pending = entries;
    for (let attempt = 1; ; attempt++) {
      let failed: PutEventsRequestEntry[];
      let lastError: string;
      try {
        const result = await this.client.send(new PutEventsCommand({ Entries: pending }));
        if (!result.FailedEntryCount) return;
        failed = pending.filter((_, index) => result.Entries?.[index]?.ErrorCode);
        lastError = result.Entries?.find((e) => e.ErrorCode)?.ErrorCode ?? 'unknown';
      } catch (error) {
        if (attempt >= this.maxAttempts) {
          throw new PublishError('PutEvents failed', pending.length, { cause: error });
        }
        await this.sleep(backoff(attempt));
        continue;
      }
      if (attempt >= this.maxAttempts) {
        throw new PublishError(
          `${failed.length} of ${entries.length} events not published (${lastError})`,
          failed.length,
        );
      }
      pending = failed;
      await this.sleep(backoff(attempt));
    }
  }

  private toEntry(event: BusEvent): PutEventsRequestEntry {
    return {
      EventBusName: this.options.busName,
      Source: event.source,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
      ...(event.time ? { Time: event.time } : {}),
    };
  }
}

function backoff(attempt: number): number {
  return 50 * 2 ** (attempt - 1);
}
