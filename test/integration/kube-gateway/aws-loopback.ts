import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AwsCall {
  method: string;
  path: string;
  /** `X-Amz-Target` for the JSON protocols (SSM, Secrets Manager). */
  target: string | undefined;
  body: unknown;
}

export type AwsAnswer = { status: number; body: unknown; contentType?: string };

/** A loopback AWS endpoint: every call is recorded and answered by `answer`. */
export class AwsLoopback {
  readonly calls: AwsCall[] = [];
  private server: Server | undefined;
  private port = 0;

  constructor(public answer: (call: AwsCall) => AwsAnswer) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const target = req.headers['x-amz-target'];
        const call: AwsCall = {
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          target: typeof target === 'string' ? target : undefined,
          body: raw ? (JSON.parse(raw) as unknown) : undefined,
        };
        this.calls.push(call);
        const a = this.answer(call);
        const text = JSON.stringify(a.body);
        res.writeHead(a.status, {
          'Content-Type': a.contentType ?? 'application/json',
          'Content-Length': Buffer.byteLength(text),
          'x-amzn-requestid': `req-${this.calls.length}`,
        });
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export const TEST_CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-example' };
