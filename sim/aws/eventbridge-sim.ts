import { AwsJsonEndpoint } from './aws-json-endpoint.js';
import type { AwsJsonReply } from './aws-json-endpoint.js';

export interface ReceivedEntry {
  EventBusName?: string;
  Source: string;
  DetailType: string;
  Detail: string;
  Time?: number | string;
}

export interface EventBridgeSimOptions {
  /** Decides, per entry, whether to report it failed (FailedEntryCount); default none. */
  failEntry?: (entry: ReceivedEntry, callIndex: number) => boolean;
  /** Answers the whole call with HTTP 500 when true for that call. */
  failCall?: (callIndex: number) => boolean;
}

/**
 * A loopback EventBridge endpoint that speaks the PutEvents JSON protocol the AWS SDK uses,
 * records accepted entries, and can fail entries or whole calls on demand.
 */
export class EventBridgeSim {
  readonly entries: ReceivedEntry[] = [];
  calls = 0;
  private readonly endpoint = new AwsJsonEndpoint('application/x-amz-json-1.1', (target, request) =>
    this.answer(target, request as { Entries?: ReceivedEntry[] }),
  );
  private readonly listeners: ((entry: ReceivedEntry) => void)[] = [];

  constructor(public options: EventBridgeSimOptions = {}) {}

  start(): Promise<string> {
    return this.endpoint.start();
  }

  stop(): Promise<void> {
    return this.endpoint.stop();
  }

  /** Called for every accepted entry, as the bus would route it to a target. */
  onEntry(listener: (entry: ReceivedEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Accepted entries' details, parsed. */
  details(): unknown[] {
    return this.entries.map((entry) => JSON.parse(entry.Detail) as unknown);
  }

  private answer(target: string, request: { Entries?: ReceivedEntry[] }): AwsJsonReply {
    const callIndex = this.calls++;
    if (target !== 'AWSEvents.PutEvents') {
      return {
        status: 400,
        body: { __type: 'UnknownOperationException', message: 'only PutEvents is simulated' },
      };
    }
    if (this.options.failCall?.(callIndex)) {
      return { status: 500, body: { __type: 'InternalException', message: 'injected failure' } };
    }
    const results = (request.Entries ?? []).map((entry) => {
      if (this.options.failEntry?.(entry, callIndex)) {
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'injected entry failure' };
      }
      this.entries.push(entry);
      for (const listener of this.listeners) listener(entry);
      return { EventId: `sim-${this.entries.length}` };
    });
    return {
      status: 200,
      body: { Entries: results, FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length },
    };
  }
}
