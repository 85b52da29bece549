import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { localLambdaContext } from './lambda-context.js';

export type FunctionUrlHandler = (
  event: LambdaFunctionURLEvent,
  context: Context,
) => Promise<LambdaFunctionURLResult>;

/** Lambda Function URLs refuse bodies above this before the function runs. */
const FUNCTION_URL_BODY_LIMIT = 6 * 1024 * 1024;
const TEXT_TYPES = /^(application\/(json|x-www-form-urlencoded|.*\+json)|text\/)/i;

export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves Lambda handlers over plain HTTP the way a Function URL calls them (payload v2),
 * plus `GET /healthz`. Used by `npm start` and by tests that want a real socket.
 */
export async function startFunctionUrlServer(
  routes: Record<string, FunctionUrlHandler>,
  port: number,
  host = '127.0.0.1',
): Promise<LocalServer> {
  const server = http.createServer((req, res) => {
    void serve(routes, req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', reason: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function serve(
  routes: Record<string, FunctionUrlHandler>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ok' }));
    return;
  }
  const handler = routes[url.pathname];
  if (!handler) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'rejected', reason: `no route ${url.pathname}` }));
    return;
  }
  const body = await readBody(req, FUNCTION_URL_BODY_LIMIT);
  if (body === undefined) {
    res.writeHead(413, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'rejected', reason: 'request body too large' }));
    return;
  }
  const result = await handler(
    toEvent(req, url, body),
    localLambdaContext(`local${url.pathname.replace(/\//g, '-')}`),
  );
  if (typeof result === 'string') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(result);
    return;
  }
  res.writeHead(result.statusCode ?? 200, result.headers as http.OutgoingHttpHeaders | undefined);
  res.end(result.body ?? '');
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toEvent(req: http.IncomingMessage, url: URL, body: Buffer): LambdaFunctionURLEvent {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    isBase64Encoded: !isText,
    body: isText ? body.toString('utf8') : body.toString('base64'),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
}
