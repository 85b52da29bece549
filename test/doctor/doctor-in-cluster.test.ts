/**
 * `runner-medic doctor --in-cluster` against a serve replica on the Kubernetes twin (RBAC
 * enforced, the in-cluster Roles of infra/kubernetes/in-cluster applied), with serve's own
 * environment and identity, as `kubectl exec deploy/runner-medic -- node
 * /app/functions/cli/entry.mjs doctor --in-cluster` runs it in a pod: a healthy deployment passes; then each fault gives its finding:
 * a Role missing a verb, a replica whose informers fail (/readyz 503), a store folder that is not
 * writable (the CLI as a non-root process), a stale Lease, no Lease. The serve replica's clock is
 * the twin's SimClock, and so is the doctor's (a CLI seam), so the Lease's age is simulated time.
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { runCli } from '../../functions/cli/main.js';
import type { DoctorCheck } from '../../functions/doctor/doctor-check.js';
import { exitCodeOf } from '../../functions/doctor/doctor-check.js';
import { runInClusterDoctor } from '../../functions/doctor/in-cluster-checks.js';
import { serveAccessToReview } from '../../functions/doctor/serve-access.js';
import { ServeRuntime } from '../../functions/serve/serve-runtime.js';
import { loadServeSettings } from '../../functions/serve/serve-settings.js';
import type { Timers } from '../../functions/serve/timers.js';
import { SimClock } from '../../sim/clock.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { parseManifest } from '../../sim/kube/manifest.js';
import type { KubeObject } from '../../sim/kube/types.js';
import { runToEnd, type Finished } from '../helpers/run-to-end.js';
import { assertReachableByOthers } from '../helpers/unprivileged-child.js';

const IN_CLUSTER = 'infra/kubernetes/in-cluster';
const RBAC_FILES = ['rbac-lease.yaml', 'rbac-runner-namespace.yaml', 'rbac-cluster.yaml'];
/** The user the twin's runner-medic kubeconfig authenticates as (it mints no ServiceAccount token). */
const TWIN_IDENTITY = 'runner-medic';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
type RbacObject = KubeObject & {
  rules?: PolicyRule[];
  subjects?: { kind: string; name: string; namespace?: string; apiGroup?: string }[];
};

/** The in-cluster RBAC documents as written, the ServiceAccount subject made the twin's user. */
function inClusterRbac(): RbacObject[] {
  return RBAC_FILES.flatMap((file) =>
    (parseManifest(readText(`${IN_CLUSTER}/${file}`), file) as RbacObject[]).map((object) =>
      object.subjects
        ? {
            ...object,
            subjects: object.subjects.map((s) =>
              s.kind === 'ServiceAccount'
                ? { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: TWIN_IDENTITY }
                : s,
            ),
          }
        : object,
    ),
  );
}

const readText = (path: string) => readFileSync(path, 'utf8');

function apply(cluster: SimCluster, objects: RbacObject[]): void {
  cluster.applyManifest(objects.map((o) => stringify(o)).join('---\n'));
}

function byId(checks: readonly DoctorCheck[]): Record<string, DoctorCheck> {
  return Object.fromEntries(checks.map((c) => [c.id, c]));
}

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

interface World {
  clock: SimClock;
  cluster: SimCluster;
  dir: string;
  storeDir: string;
  kubeconfigFile: string;
  replica: ServeRuntime;
  /** serve's environment as the doctor reads it in the replica's pod. */
  env: Record<string, string>;
}

let world: World;

/** serve's environment for one replica; PROBE_PORT 0 until it listens. */
function serveEnv(dir: string, name: string, extra: Record<string, string> = {}) {
  return {
    CLUSTER_NAME: 'in-cluster',
    RUNNER_NAMESPACES: 'arc-runners',
    STORE: 'sqlite',
    SQLITE_PATH: join(dir, 'runner-medic.db'),
    HOST: '127.0.0.1',
    PORT: '0',
    PROBE_PORT: '0',
    POD_NAME: name,
    POD_NAMESPACE: 'runner-medic',
    // Long enough that the CLI child, on the system clock, sees the Lease fresh.
    LEASE_DURATION_SECONDS: '600',
    RENEW_DEADLINE_SECONDS: '300',
    GITHUB_WEBHOOK_SECRET: 'in-cluster-secret',
    GITHUB_APP_CREDENTIALS: JSON.stringify({ appId: 1, privateKey }),
    ...extra,
  };
}

async function startReplica(
  clock: SimClock,
  kubeconfigText: string,
  env: Record<string, string>,
): Promise<{ replica: ServeRuntime; env: Record<string, string> }> {
  const timers: Timers = {
    after: (ms, label, run) => {
      const handle = clock.after(ms, label, run);
      return () => clock.cancel(handle);
    },
  };
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromString(kubeconfigText);
  const replica = new ServeRuntime({ env, clock, timers, kubeconfig, out: { write: () => true } });
  const { probeUrl } = await replica.start();
  await replica.settled();
  return { replica, env: { ...env, PROBE_PORT: new URL(probeUrl).port } };
}

beforeAll(async () => {
  const clock = new SimClock(Date.now());
  const cluster = new SimCluster({ name: 'in-cluster', clock, rbac: true });
  cluster.createNamespace('arc-runners');
  apply(cluster, inClusterRbac());
  await cluster.start();
  const dir = mkdtempSync(join(tmpdir(), 'doctor-in-cluster-'));
  chmodSync(dir, 0o755);
  const storeDir = join(dir, 'data');
  mkdirSync(storeDir, { mode: 0o755 });
  const kubeconfigFile = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, cluster.kubeconfig('runner-medic'), { mode: 0o644 });
  const started = await startReplica(
    clock,
    cluster.kubeconfig('runner-medic'),
    serveEnv(storeDir, 'runner-medic-0'),
  );
  world = {
    clock,
    cluster,
    dir,
    storeDir,
    kubeconfigFile,
    replica: started.replica,
    env: { ...started.env, KUBECONFIG: kubeconfigFile },
  };
}, 120_000);

afterAll(async () => {
  if (!world.replica.status().draining) await world.replica.abandon();
  await world.cluster.stop();
  chmodSync(world.storeDir, 0o755);
  rmSync(world.dir, { recursive: true, force: true });
});

test('the in-cluster manifests grant exactly the calls the doctor asks about', () => {
  const deployment = parseManifest(readText(`${IN_CLUSTER}/deployment.yaml`))[0] as KubeObject & {
    spec: {
      template: { spec: { containers: { env: { name: string; value?: string }[] }[] } };
    };
  };
  const env = Object.fromEntries(
    (deployment.spec.template.spec.containers[0]?.env ?? []).flatMap((e) =>
      e.value === undefined ? [] : [[e.name, e.value]],
    ),
  );
  const settings = loadServeSettings({ ...env, POD_NAMESPACE: deployment.metadata.namespace });
  const asked = serveAccessToReview(settings).map(
    (a) => `${a.verb} ${a.group}/${a.resource} ${a.namespace ?? '*'} ${a.name ?? '*'}`,
  );
  const granted = inClusterRbac()
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((role) =>
      (role.rules ?? []).flatMap((r) =>
        r.apiGroups.flatMap((g) =>
          r.resources.flatMap((res) =>
            r.verbs.flatMap((v) =>
              (r.resourceNames ?? ['*']).map(
                (n) => `${v} ${g}/${res} ${role.metadata.namespace ?? '*'} ${n}`,
              ),
            ),
          ),
        ),
      ),
    );
  expect(new Set(asked).size).toBe(asked.length);
  expect([...asked].sort()).toEqual([...granted].sort());
});

test('a healthy deployment: every check ok, exit code 0, through the CLI as in the pod', async () => {
  const writesBefore = world.cluster.audit.by('runner-medic').length;
  const requestsBefore = world.cluster.audit.requests.length;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    ['doctor', '--in-cluster', '--json'],
    { env: world.env, out: (t) => out.push(t), err: (t) => err.push(t) },
    { clock: world.clock },
  );
  const report = JSON.parse(out.join('')) as { checks: DoctorCheck[] };
  expect(report.checks.map((c) => [c.id, c.status])).toEqual([
    ['in-cluster.settings', 'ok'],
    ['in-cluster.reachable', 'ok'],
    ['in-cluster.lease', 'ok'],
    ['in-cluster.readyz', 'ok'],
    ['in-cluster.store', 'ok'],
    ['in-cluster.rbac', 'ok'],
  ]);
  const checks = byId(report.checks);
  expect(checks['in-cluster.lease']?.why).toMatch(/^runner-medic-0 \(this replica\) leads: /);
  expect(checks['in-cluster.readyz']?.why).toMatch(/^runner-medic-0 is ready: .*; it leads\.$/);
  expect(checks['in-cluster.rbac']?.why).toContain('(18 SelfSubjectAccessReviews');
  expect(code).toBe(0);
  expect(err).toEqual([]);

  // Each review was asked with the replica's own identity, and the doctor changed nothing.
  const reviews = world.cluster.audit.requests
    .slice(requestsBefore)
    .filter((r) => r.path.includes('/selfsubjectaccessreviews'));
  expect(reviews.map((r) => [r.by, r.code])).toEqual(Array(18).fill(['runner-medic', 201]));
  expect(world.cluster.audit.by('runner-medic')).toHaveLength(writesBefore);
});

test('--in-cluster with another doctor option is a usage error (64)', async () => {
  const err: string[] = [];
  const code = await runCli(['doctor', '--in-cluster', '--sandbox'], {
    env: world.env,
    out: () => undefined,
    err: (t) => err.push(t),
  });
  expect(code).toBe(64);
  expect(err.join('')).toContain('--in-cluster takes only --json (not --sandbox)');
});

test('a Role missing a verb: the RBAC finding names the call, the rest stays ok', async () => {
  const original = inClusterRbac();
  const withoutPatch = original.map((o) =>
    o.kind === 'Role' && o.metadata.name === 'runner-medic'
      ? {
          ...o,
          rules: (o.rules ?? []).map((r) => ({
            ...r,
            verbs: r.verbs.filter((v) => v !== 'patch'),
          })),
        }
      : o,
  );
  apply(world.cluster, withoutPatch);
  try {
    const checks = await runInClusterDoctor({ env: world.env, clock: world.clock });
    const rbac = byId(checks)['in-cluster.rbac'];
    expect(rbac?.status).toBe('finding');
    expect(rbac?.why).toContain(
      'denied 1 of the 18 calls serve makes: patch actions.github.com/ephemeralrunners in arc-runners.',
    );
    expect(rbac?.what).toContain('kubectl apply -k infra/kubernetes/in-cluster');
    expect(checks.filter((c) => c.status !== 'ok').map((c) => c.id)).toEqual(['in-cluster.rbac']);
    expect(exitCodeOf(checks)).toBe(1);
  } finally {
    apply(world.cluster, original);
  }
});

test('a replica whose informers fail: /readyz says why, and the RBAC check names the namespace', async () => {
  world.cluster.createNamespace('arc-extra');
  const storeDir = join(world.dir, 'extra');
  mkdirSync(storeDir);
  const started = await startReplica(
    world.clock,
    world.cluster.kubeconfig('runner-medic'),
    serveEnv(storeDir, 'runner-medic-1', { RUNNER_NAMESPACES: 'arc-runners,arc-extra' }),
  );
  try {
    const checks = byId(
      await runInClusterDoctor({
        env: { ...started.env, KUBECONFIG: world.kubeconfigFile },
        clock: world.clock,
      }),
    );
    const readyz = checks['in-cluster.readyz'];
    expect(readyz?.status).toBe('finding');
    expect(readyz?.why).toMatch(
      /^runner-medic-1 is not ready \(.*answers 503\): informer \/api\/v1\/namespaces\/arc-extra\/pods failing: /,
    );
    expect(readyz?.why).toContain('informer /api/v1/namespaces/arc-extra/events failing');
    expect(readyz?.what).toContain('see in-cluster.rbac');
    expect(checks['in-cluster.rbac']?.why).toContain(
      'denied 11 of the 29 calls serve makes: list actions.github.com/ephemeralrunners in arc-extra, list pods in arc-extra,',
    );
    expect(checks['in-cluster.lease']?.why).toMatch(/^runner-medic-0 leads: /);
    expect(checks['in-cluster.store']?.status).toBe('ok');
  } finally {
    await started.replica.drain();
  }
});

/** `runner-medic doctor --in-cluster --json` as a process of a non-root user (the pod's uid). */
function runDoctorProcess(env: Record<string, string>): Promise<Finished> {
  const root = process.getuid?.() === 0;
  if (root) assertReachableByOthers(process.execPath);
  return runToEnd(process.execPath, ['bin/runner-medic.mjs', 'doctor', '--in-cluster', '--json'], {
    env: { PATH: process.env.PATH ?? '', HOME: world.dir, ...env },
    ...(root ? { uid: 65534, gid: 65534 } : {}),
  });
}

test('a store folder that is not writable: the store finding, from the CLI as a process', async () => {
  chmodSync(world.storeDir, 0o555);
  try {
    const result = await runDoctorProcess(world.env);
    expect(result.stderr).toBe('');
    const checks = byId((JSON.parse(result.stdout) as { checks: DoctorCheck[] }).checks);
    const store = checks['in-cluster.store'];
    expect(store?.status).toBe('finding');
    expect(store?.why).toContain(`${world.storeDir} is not writable by this process (EACCES`);
    expect(store?.what).toContain('securityContext.fsGroup');
    // The replica opened its store before: it is still ready.
    expect(checks['in-cluster.readyz']?.status).toBe('ok');
    expect(result.code).toBe(1);
  } finally {
    chmodSync(world.storeDir, 0o755);
  }
}, 120_000);

test('serve settings that would not start, or no pod and no KUBECONFIG: said at once', async () => {
  const without = (name: string) =>
    Object.fromEntries(Object.entries(world.env).filter(([key]) => key !== name));
  const settings = await runInClusterDoctor({ env: without('CLUSTER_NAME'), clock: world.clock });
  expect(settings.map((c) => [c.id, c.status])).toEqual([['in-cluster.settings', 'finding']]);
  expect(settings[0]?.why).toContain('CLUSTER_NAME');

  const outside = await runInClusterDoctor({ env: without('KUBECONFIG'), clock: world.clock });
  const ids = outside.map((c) => c.id);
  expect(ids).not.toContain('in-cluster.lease');
  expect(ids).not.toContain('in-cluster.rbac');
  expect(byId(outside)['in-cluster.reachable']?.why).toMatch(/^Not in a pod/);
  expect(exitCodeOf(outside)).toBe(2);
});

test('a folder where serve never opened its store, on a volume below the floor', async () => {
  const empty = join(world.dir, 'empty');
  mkdirSync(empty);
  const checks = await runInClusterDoctor({
    env: { ...world.env, SQLITE_PATH: join(empty, 'runner-medic.db') },
    clock: world.clock,
    minFreeBytes: Number.MAX_SAFE_INTEGER,
  });
  const store = byId(checks)['in-cluster.store'];
  expect(store?.status).toBe('finding');
  expect(store?.why).toContain(`there is no database at ${join(empty, 'runner-medic.db')} yet`);
  expect(store?.why).toMatch(/only \d+ MiB is free on the volume at .*\/empty \(the floor is/);
  expect(store?.why).not.toContain('not writable');
  expect(store?.what).toContain('Grow the PVC');
});

test('a stale Lease: its holder was killed, and the Lease outlived its duration', async () => {
  await world.replica.abandon();
  await world.clock.advance(601_000);
  const checks = byId(await runInClusterDoctor({ env: world.env, clock: world.clock }));
  const lease = checks['in-cluster.lease'];
  expect(lease?.status).toBe('finding');
  expect(lease?.why).toMatch(
    /^runner-medic-0 \(this replica\) holds the Lease runner-medic\/runner-medic but last renewed it 601\.0 s ago, longer than its 600 s duration/,
  );
  expect(lease?.what).toContain('kubectl -n runner-medic get pod runner-medic-0');
  // Nothing listens on the killed replica's probe port any more.
  expect(checks['in-cluster.readyz']?.why).toMatch(/^serve is not running here: nothing listens/);
});

test('a released Lease: no holder, nobody acts', async () => {
  const api = world.cluster.api;
  const lease = api.get('leases', 'runner-medic', 'runner-medic') as KubeObject & {
    spec: Record<string, unknown>;
  };
  api.update('scenario', 'leases', 'runner-medic', 'runner-medic', {
    ...lease,
    spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1 },
  });
  const checks = byId(await runInClusterDoctor({ env: world.env, clock: world.clock }));
  expect(checks['in-cluster.lease']?.status).toBe('finding');
  expect(checks['in-cluster.lease']?.why).toMatch(
    /^The Lease runner-medic\/runner-medic has no holder \(last written 601\.0 s ago\): the last leader released it/,
  );
});

test('no Lease: nobody has ever led', async () => {
  world.cluster.api.delete('scenario', 'leases', 'runner-medic', 'runner-medic');
  const checks = byId(await runInClusterDoctor({ env: world.env, clock: world.clock }));
  expect(checks['in-cluster.lease']).toEqual({
    id: 'in-cluster.lease',
    status: 'finding',
    why: 'There is no Lease runner-medic/runner-medic: no replica has ever taken the lead, so nothing acts (no remediation, no sweep).',
    what: expect.stringContaining('create on leases') as unknown,
  });
});
