import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One DynamoDB call as the proxy saw it: its operation, its status, what was sent and answered. */
export interface StoreExchange {
  operation: string;
  status: number;
  body: Buffer;
  payload: Buffer;
}

/**
 * A pass-through proxy in front of dynalite that shows each exchange to `seen`, so a bench counts
 * the store's work from what crossed the wire, never from the product's own counters.
 */
export async function startCountingProxy(
  target: string,
  seen: (exchange: StoreExchange) => void,
): Promise<{ url: string; server: Server }> {
  const url = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const upstream = request(
        {
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (c: Buffer) => out.push(c));
          answer.on('end', () => {
            const payload = Buffer.concat(out);
            const status = answer.statusCode ?? 500;
            seen({ operation, status, body, payload });
            res.writeHead(status, answer.headers);
            res.end(payload);
          });
        },
      );
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
