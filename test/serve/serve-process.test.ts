/**
 * `runner-medic serve` as the container runs it: child processes of the bin launcher
 * (bin/runner-medic.mjs), on the system clock, against a Kubernetes twin this test
 * process hosts on loopback (KUBECONFIG), each with its own probe port and one shared SQLite file.
 * - SIGTERM: the replica drains, releases the Lease (holder cleared, as client-go's
 *   ReleaseOnCancel) and exits 0.
 * - Two replicas: exactly one holds the Lease; SIGKILL it, and the other takes the Lease once
 *   it expires (short Lease durations; waits are bounded in count, each on a condition).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimClock } from '../../sim/clock.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { kill, leads, startReplica as start, until } from './serve-children.js';

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
}

const CHILD_TIMEOUT = 240_000;

let dir: string;
let cluster: SimCluster;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'serve-process-'));
  cluster = new SimCluster({ name: 'proc-cluster', clock: new SimClock(Date.now()) });
  cluster.createNamespace('arc-runners');
  cluster.createNamespace('runner-medic');
  await cluster.start();
  const kubeconfig = join(dir, 'runner-medic.kubeconfig');
  writeFileSync(kubeconfig, cluster.kubeconfig('runner-medic'), { mode: 0o600 });
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  env = {
    KUBECONFIG: kubeconfig,
    CLUSTER_NAME: 'proc-cluster',
    RUNNER_NAMESPACES: 'arc-runners',
    SQLITE_PATH: join(dir, 'runner-medic.db'),
    HOST: '127.0.0.1',
    PORT: '0',
    PROBE_PORT: '0',
    GITHUB_WEBHOOK_SECRET: 'serve-process-secret',
    GITHUB_APP_CREDENTIALS: JSON.stringify({ appId: 1, privateKey }),
    // A GitHub nobody answers: these tests are about the Lease, not about acting.
    GITHUB_API_URL: 'http://127.0.0.1:9',
    LEASE_DURATION_SECONDS: '3',
    RENEW_DEADLINE_SECONDS: '2',
    RETRY_PERIOD_SECONDS: '1',
  };
}, CHILD_TIMEOUT);

afterAll(async () => {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

const startReplica = (name: string) => start(name, env);

function lease(): LeaseSpec | undefined {
  const object = cluster.api.tryGet('leases', 'runner-medic', 'runner-medic') as
    { spec?: LeaseSpec } | undefined;
  return object?.spec;
}

test(
  'SIGTERM: the replica drains, releases the Lease and exits 0',
  async () => {
    const replica = startReplica('runner-medic-a');
    try {
      await until('replica a takes the Lease', () => leads(replica), [replica]);
      expect(lease()?.holderIdentity).toBe('runner-medic-a');
      const probeUrl = /GET {2}(http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(replica.stderr())?.[1];
      const readyz = await fetch(`${probeUrl ?? ''}/readyz`);
      expect(readyz.status).toBe(200);

      replica.child.kill('SIGTERM');
      expect(await replica.exited).toEqual({ code: 0, signal: null });
      expect(replica.stderr()).toContain('runner-medic serve: SIGTERM: draining');
      expect(replica.stderr()).toContain('runner-medic serve: stopped');
      expect(replica.stdout()).toContain('"message":"lease: released"');
      // Released as client-go releases: no holder, so a follower takes it at once.
      expect(lease()).toEqual(expect.objectContaining({ holderIdentity: null }));
    } finally {
      kill(replica);
    }
  },
  CHILD_TIMEOUT,
);

test(
  'two replicas: exactly one leads; SIGKILL it and the other takes the Lease once it expires',
  async () => {
    const a = startReplica('runner-medic-b1');
    const b = startReplica('runner-medic-b2');
    const both = [a, b];
    try {
      await until('one replica takes the Lease', () => both.some(leads), both);
      // Both are up and ready (the follower serves the webhook too); one leads.
      await until(
        'both replicas print their banner',
        () => both.every((r) => r.stderr().includes('/readyz')),
        both,
      );
      const leader = leads(a) ? a : b;
      const follower = leader === a ? b : a;
      expect(lease()?.holderIdentity).toBe(leader.name);
      expect(leads(follower)).toBe(false);
      const transitions = lease()?.leaseTransitions ?? 0;

      kill(leader);
      await leader.exited;
      await until('the follower takes the Lease', () => leads(follower), both);
      expect(lease()?.holderIdentity).toBe(follower.name);
      expect(lease()?.leaseTransitions).toBe(transitions + 1);
      // The killed leader never released it: the follower waited for it to expire.
      expect(leader.stdout()).not.toContain('lease: released');
    } finally {
      for (const r of both) kill(r);
      await Promise.all(both.map((r) => r.exited));
    }
  },
  CHILD_TIMEOUT,
);
