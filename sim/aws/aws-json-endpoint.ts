import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AwsJsonReply {
  status: number;
  body: object;
}

/** Answers one AWS JSON-protocol call: the `X-Amz-Target` operation and the parsed request. */
export type AwsJsonHandler = (target: string, request: unknown) => AwsJsonReply;

/**
 * A loopback endpoint for an AWS service that speaks the JSON protocol (`X-Amz-Target` plus a
 * JSON body), as the SDK clients of EventBridge and SQS do.
 */
export class AwsJsonEndpoint {
  private server: http.Server | undefined;

  constructor(
    private readonly contentType: string,
    private readonly handle: AwsJsonHandler,
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const reply = this.handle(
          String(req.headers['x-amz-target'] ?? ''),
          JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown,
        );
        res.writeHead(reply.status, { 'content-type': this.contentType });
        res.end(JSON.stringify(reply.body));
      });
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
}
