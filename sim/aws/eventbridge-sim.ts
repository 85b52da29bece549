import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
  private server: http.Server | undefined;
  private readonly listeners: ((entry: ReceivedEntry) => void)[] = [];

  constructor(public options: EventBridgeSimOptions = {}) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.answer(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Called for every accepted entry, as the bus would route it to a target. */
  onEntry(listener: (entry: ReceivedEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Accepted entries' details, parsed. */
  details(): unknown[] {
    return this.entries.map((entry) => JSON.parse(entry.Detail) as unknown);
  }

  private answer(req: http.IncomingMessage, body: string, res: http.ServerResponse) {
    const callIndex = this.calls++;
    const send = (status: number, payload: object) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(payload));
    };
    if (req.headers['x-amz-target'] !== 'AWSEvents.PutEvents') {
      send(400, { __type: 'UnknownOperationException', message: 'only PutEvents is simulated' });
      return;
    }
    if (this.options.failCall?.(callIndex)) {
      send(500, { __type: 'InternalException', message: 'injected failure' });
      return;
    }
    const request = JSON.parse(body) as { Entries?: ReceivedEntry[] };
    const results = (request.Entries ?? []).map((entry) => {
      if (this.options.failEntry?.(entry, callIndex)) {
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'injected entry failure' };
      }
      this.entries.push(entry);
      for (const listener of this.listeners) listener(entry);
      return { EventId: `sim-${this.entries.length}` };
    });
    send(200, {
      Entries: results,
      FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length,
    });
  }
}
