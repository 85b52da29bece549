import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SentMessage {
  QueueUrl: string;
  MessageBody: string;
  DelaySeconds?: number;
}

/** A loopback SQS endpoint for SendMessage in the JSON protocol the AWS SDK uses; records what it gets. */
export class SqsSim {
  readonly messages: SentMessage[] = [];
  private server: http.Server | undefined;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const send = (status: number, body: object) => {
          res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify(body));
        };
        if (req.headers['x-amz-target'] !== 'AmazonSQS.SendMessage') {
          send(400, {
            __type: 'com.amazonaws.sqs#UnsupportedOperation',
            message: 'only SendMessage',
          });
          return;
        }
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SentMessage;
        this.messages.push(message);
        send(200, {
          MessageId: `sim-${this.messages.length}`,
          MD5OfMessageBody: createHash('md5').update(message.MessageBody).digest('hex'),
        });
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
