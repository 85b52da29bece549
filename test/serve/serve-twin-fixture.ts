/**
 * One serve replica in this process against a bare Kubernetes API twin (no cluster models), its
 * timers on the twin's simulated clock (nothing runs on a timer until the test advances it),
 * SQLite in a temporary folder, the GitHub twin with an App installed on an org with no
 * repositories (the engine's sweeps find nothing to do, quickly).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { loopbackClients } from '../../sandbox/local/loopback-clients.js';
import { ServeRuntime } from '../../functions/serve/serve-runtime.js';
import type { Timers } from '../../functions/serve/timers.js';
import type { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import type { ApiServer } from '../../sim/kube/api/api-server.js';
import { kubeConfigFor, NS, startSim } from '../integration/kube-gateway/sim-fixture.js';

const SERVE_NAMESPACE = 'runner-medic';
const NODE_EVENTS_NS = 'other';

export interface ServeOnTwin {
  server: ApiServer;
  clock: SimClock;
  runtime: ServeRuntime;
  urls: { webhookUrl: string; probeUrl: string };
  /** The replica's JSON lines (audit events and warnings). */
  lines: string[];
  sqlitePath: string;
  stop(): Promise<void>;
}

export function simTimers(clock: SimClock): Timers {
  return {
    after: (ms, label, run) => {
      const handle = clock.after(ms, label, run);
      return () => clock.cancel(handle);
    },
  };
}

export async function startServeOnTwin(
  options: {
    env?: Record<string, string>;
    /** Before serve starts: the Lease held by another replica for an hour (serve follows). */
    leaseHeldBy?: string;
  } = {},
): Promise<ServeOnTwin> {
  const { server, clock } = await startSim();
  const github = new GitHubSim({ clock, seed: 22 });
  await github.start();
  github.createOrg('acme');
  github.createInstallation('acme');
  server.api.create('admin', 'namespaces', undefined, { metadata: { name: SERVE_NAMESPACE } });
  if (options.leaseHeldBy)
    server.api.create('admin', 'leases', SERVE_NAMESPACE, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'runner-medic', namespace: SERVE_NAMESPACE },
      spec: {
        holderIdentity: options.leaseHeldBy,
        leaseDurationSeconds: 3600,
        renewTime: new Date(clock.now()).toISOString().replace('Z', '000Z'),
      },
    });
  const dir = mkdtempSync(join(tmpdir(), 'serve-twin-'));
  const sqlitePath = join(dir, 'runner-medic.db');
  const lines: string[] = [];
  const runtime = new ServeRuntime({
    env: {
      CLUSTER_NAME: 'sim',
      RUNNER_NAMESPACES: NS,
      NODE_EVENTS_NAMESPACE: NODE_EVENTS_NS,
      SQLITE_PATH: sqlitePath,
      HOST: '127.0.0.1',
      PORT: '0',
      PROBE_PORT: '0',
      POD_NAME: 'runner-medic-0',
      POD_NAMESPACE: SERVE_NAMESPACE,
      GITHUB_WEBHOOK_SECRET: 'It is a secret to everybody',
      GITHUB_APP_CREDENTIALS: JSON.stringify({
        appId: github.app.appId,
        privateKey: github.app.privateKey,
      }),
      GITHUB_API_URL: github.baseUrl,
      ...options.env,
    },
    clock,
    timers: simTimers(clock),
    kubeconfig: kubeConfigFor(server),
    out: { write: (line: string) => void lines.push(line) },
    clients: loopbackClients(clock),
  });
  const urls = await runtime.start();
  return {
    server,
    clock,
    runtime,
    urls,
    lines,
    sqlitePath,
    stop: async () => {
      await runtime.drain();
      await server.stop();
      await github.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every row of every table of the SQLite store, by table, read over a second connection. */
export function storeRows(sqlitePath: string): Record<string, unknown[]> {
  const db = new DatabaseSync(sqlitePath);
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all() as { name: string }[];
    return Object.fromEntries(
      tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]),
    );
  } finally {
    db.close();
  }
}

/** The value of one sample of the Prometheus text, by metric name and a label it carries. */
export function sample(text: string, name: string, label = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
