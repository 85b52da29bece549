/**
 * serve's probes, metrics and audit over real HTTP, in this process (so coverage counts the
 * runtime): the Karpenter seed played through serve, with /healthz, /readyz and /metrics read
 * while it plays and the audit events read from stdout's JSON lines and from the SQLite store;
 * and a store that cannot be opened: /readyz fails and says why, one clear log line, the webhook
 * answers 503, and the replica never takes the Lease.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { openSqliteStores } from '../../functions/adapters/store/sqlite-stores.js';
import { playServeSandbox } from '../../sandbox/serve-sandbox.js';
import { ServeRuntime } from '../../functions/serve/serve-runtime.js';
import { systemTimers } from '../../functions/serve/timers.js';
import { SimClock } from '../../sim/clock.js';
import { SimCluster } from '../../sim/kube/cluster.js';

const SEED = 'test/scenarios/seed-karpenter-mid-job.yaml';

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

/** The value of one sample of the Prometheus text, by metric name and a label it carries. */
function sample(text: string, name: string, label = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('the seed played through serve: ready once synced, metrics under the CloudWatch names, audit on stdout and in the store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'serve-probes-'));
  const lines: string[] = [];
  const probes: { healthz?: number; readyz?: { status: number; body: unknown }; metrics?: string } =
    {};
  try {
    const result = await playServeSandbox({
      file: SEED,
      speed: null,
      write: () => undefined,
      sink: (line) => lines.push(line),
      dir,
      onStep: async (replicas) => {
        const urls = replicas[0]?.urls;
        if (!urls) return;
        if (probes.readyz === undefined) {
          probes.healthz = (await get(`${urls.probeUrl}/healthz`)).status;
          const readyz = await get(`${urls.probeUrl}/readyz`);
          probes.readyz = { status: readyz.status, body: JSON.parse(readyz.text) };
        }
        const audits = lines.filter((l) => l.includes('"detail-type":"Remediation"')).length;
        if (audits === 2 && probes.metrics === undefined)
          probes.metrics = (await get(`${urls.probeUrl}/metrics`)).text;
      },
    });
    expect(result.recovered).toBe(true);

    expect(probes.healthz).toBe(200);
    expect(probes.readyz).toEqual({
      status: 200,
      body: expect.objectContaining({
        status: 'ready',
        reasons: [],
        replica: 'runner-medic-0',
        leading: true,
      }) as unknown,
    });

    // The engine's and the webhook's metrics, named as in CloudWatch, dimensions as labels.
    const metrics = probes.metrics ?? '';
    expect(sample(metrics, 'Remediation', 'rule="rule-1-free-poisoned-slot"')).toBe(1);
    expect(sample(metrics, 'Remediation', 'rule="rule-3-rerun-killed-job"')).toBe(1);
    expect(sample(metrics, 'LossToAction_count', 'rule="rule-3-rerun-killed-job"')).toBe(1);
    expect(sample(metrics, 'WebhookDelivery', 'outcome="accepted"')).toBeGreaterThan(0);
    expect(sample(metrics, 'EngineRun')).toBeGreaterThan(0);
    expect(sample(metrics, 'SweepRun')).toBeGreaterThan(0);
    expect(metrics).toMatch(/^RunnerMedicLeader(\{\})? 1$/m);
    expect(metrics).toContain('# TYPE Remediation counter');

    // Audit events: JSON lines on stdout, and in the store (written with the action's result,
    // then published from the outbox, which is empty again).
    const stdoutAudits = lines
      .map((l) => JSON.parse(l) as { 'detail-type'?: string; detail?: { key: string } })
      .filter((l) => l['detail-type'] === 'Remediation')
      .map((l) => l.detail?.key);
    expect(stdoutAudits).toHaveLength(2);
    // Opened at the scenario's time: by today's clock its rows are past their time to live.
    const scenarioEnd = { now: () => Date.parse('2026-03-02T10:00:00Z') };
    const stores = openSqliteStores(join(dir, 'runner-medic.db'), scenarioEnd);
    try {
      const trail = await stores.facts.auditTrail(0, Date.parse('2100-01-01'), 100);
      expect(trail.map((r) => r.detail.key)).toEqual(stdoutAudits);
      expect(await stores.facts.unpublishedAudits(100)).toEqual([]);
    } finally {
      stores.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 600_000);

test('a store that cannot be opened: /readyz fails and says why, the webhook answers 503, the Lease is never taken', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'serve-nostore-'));
  const cluster = new SimCluster({ name: 'probe-cluster', clock: new SimClock(Date.now()) });
  cluster.createNamespace('arc-runners');
  await cluster.start();
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromString(cluster.kubeconfig('runner-medic'));
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const out: string[] = [];
  const missing = join(dir, 'no-such-folder', 'runner-medic.db');
  const runtime = new ServeRuntime({
    env: {
      CLUSTER_NAME: 'probe-cluster',
      RUNNER_NAMESPACES: 'arc-runners',
      SQLITE_PATH: missing,
      HOST: '127.0.0.1',
      PORT: '0',
      PROBE_PORT: '0',
      POD_NAME: 'runner-medic-nostore',
      GITHUB_WEBHOOK_SECRET: 'secret',
      GITHUB_APP_CREDENTIALS: JSON.stringify({ appId: 1, privateKey }),
    },
    clock: { now: () => Date.now() },
    timers: systemTimers,
    kubeconfig,
    out: { write: (line: string) => void out.push(line) },
  });
  try {
    const { probeUrl, webhookUrl } = await runtime.start();
    expect((await get(`${probeUrl}/healthz`)).status).toBe(200);
    const readyz = await get(`${probeUrl}/readyz`);
    expect(readyz.status).toBe(503);
    const body = JSON.parse(readyz.text) as { reasons: string[]; leading: boolean };
    expect(body.reasons).toEqual([expect.stringMatching(/^store not open: .*no-such-folder/)]);
    expect(body.leading).toBe(false);

    const logged = out.map((l) => JSON.parse(l) as { message: string; error?: string });
    expect(
      logged.filter((l) => l.message === 'store cannot be opened; not ready, not acting'),
    ).toHaveLength(1);

    const webhook = await fetch(`${webhookUrl}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping' },
      body: '{}',
    });
    expect(webhook.status).toBe(503);

    const metrics = (await get(`${probeUrl}/metrics`)).text;
    expect(sample(metrics, 'StoreUnavailable')).toBe(1);
    // Never elected, so never acting: the Lease does not exist, and nothing was written.
    expect(cluster.audit.entries.filter((e) => e.by === 'runner-medic')).toEqual([]);
  } finally {
    await runtime.drain();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
