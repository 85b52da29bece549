/**
 * serve's probe and metrics port (not the webhook's, so neither is reachable through the
 * webhook's Service): `GET /healthz` (the process runs), `GET /readyz` (the informers have synced
 * and the store is open; 503 with the reasons otherwise), `GET /metrics` (Prometheus text).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalServer } from './function-url-server.js';
import type { ServeMetrics } from './serve-metrics.js';

export interface ProbeSource {
  status(): {
    storeOpen: boolean;
    storeError: string | null;
    informersSynced: boolean;
    informers: { path: string; synced: boolean; error: string | null }[];
    leading: boolean;
    holder: string | null;
    identity: string;
    draining: boolean;
  };
  metrics: ServeMetrics;
}

/** Why the replica is not ready; empty when it is. */
function notReadyReasons(status: ReturnType<ProbeSource['status']>): string[] {
  const reasons: string[] = [];
  if (!status.storeOpen) reasons.push(`store not open: ${status.storeError ?? 'not opened yet'}`);
  for (const i of status.informers)
    if (!i.synced || i.error)
      reasons.push(`informer ${i.path} ${i.error ? `failing: ${i.error}` : 'not synced'}`);
  if (status.informers.length === 0) reasons.push('informers not started');
  if (status.draining) reasons.push('shutting down');
  return reasons;
}

/** The gauges of what the replica is now, read as it is scraped or probed. */
function setGauges(source: ProbeSource, status: ReturnType<ProbeSource['status']>): void {
  source.metrics.gauge('RunnerMedicInformersSynced', {}, status.informersSynced ? 1 : 0);
  source.metrics.gauge('RunnerMedicLeader', {}, status.leading ? 1 : 0);
}

export async function startProbeServer(
  source: ProbeSource,
  port: number,
  host: string,
): Promise<LocalServer> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const status = source.status();
      const reasons = notReadyReasons(status);
      setGauges(source, status);
      return json(reasons.length === 0 ? 200 : 503, {
        status: reasons.length === 0 ? 'ready' : 'not ready',
        reasons,
        replica: status.identity,
        leading: status.leading,
        holder: status.holder,
      });
    }
    if (path === '/metrics') {
      setGauges(source, source.status());
      void source.metrics.text().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType });
          res.end(body);
        },
        (error: unknown) => json(500, { status: 'error', reason: String(error) }),
      );
      return;
    }
    json(404, { status: 'rejected', reason: `no route ${path}` });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
