/**
 * The leader SIGKILLed in the middle of an action, with two `runner-medic serve` processes of the
 * bin launcher against one Kubernetes API twin and one GitHub twin this test process hosts on
 * loopback, and one SQLite file. The twin enforces RBAC: the replicas are the in-cluster
 * ServiceAccount, with exactly the grants of infra/kubernetes/in-cluster/rbac-*.yaml, applied as
 * written.
 *
 * Replica a leads, started with the test-only RUNNER_MEDIC_TEST_HALT
 * (functions/serve/serve-process.ts): at its first action it stops for good, keeps renewing its
 * Lease, and says so. Replica b follows. An EphemeralRunner fails (a slot ARC ≤ 0.11 never frees):
 * a deletes it, halts, and is SIGKILLed there. b takes the Lease once it expires, and:
 * - killed between the effect and the record of its result (the claim left without one), b
 *   re-checks the claim (the EphemeralRunner is gone: the effect is in place) and records it as
 *   succeeded;
 * - killed between the result and the audit event, b publishes the event from the outbox, once.
 * Either way b does nothing again: the twins count one delete by runner-medic, and not one other
 * change to the cluster or to GitHub.
 *
 * The twins' clock follows the system clock the replicas run on (a world that does not move on
 * its own: no ARC, no kubelet). Every wait is on a condition, bounded in count.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { ApiServer } from '../../sim/kube/api/api-server.js';
import { applyManifestFile } from '../../sim/kube/manifest.js';
import { Rng } from '../../sim/rng.js';
import { jsonLines, kill, leads, startReplica, until, type Replica } from './serve-children.js';

const CHILD_TIMEOUT = 240_000;
const NS = 'arc-runners';
const SCALE_SET = 'arc-linux';
const SERVICE_ACCOUNT = 'system:serviceaccount:runner-medic:runner-medic';
const LEASE = 'leases.coordination.k8s.io';
const RBAC = [
  'infra/kubernetes/in-cluster/rbac-lease.yaml',
  'infra/kubernetes/in-cluster/rbac-runner-namespace.yaml',
  'infra/kubernetes/in-cluster/rbac-cluster.yaml',
];

let dir: string;
let clock: SimClock;
let pace: ReturnType<typeof setInterval>;
let server: ApiServer;
let github: GitHubSim;
let env: Record<string, string>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'serve-leader-kill-'));
  clock = new SimClock(Date.now());
  pace = setInterval(() => void clock.advanceTo(Date.now()), 100);
  server = new ApiServer({
    clock,
    rng: new Rng(22),
    clusterName: 'kill-cluster',
    schemaFlavour: '0.13',
    actors: [SERVICE_ACCOUNT, 'admin'],
    rbac: true,
  });
  await server.start();
  for (const name of [NS, 'runner-medic', 'default'])
    server.api.create('admin', 'namespaces', undefined, { metadata: { name } });
  for (const file of RBAC) applyManifestFile(server.api, file, { actor: 'admin' });
  github = new GitHubSim({ clock, seed: 22 });
  await github.start();
  github.createOrg('acme');
  github.createInstallation('acme');

  const kubeconfig = join(dir, 'runner-medic.kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfig(SERVICE_ACCOUNT), { mode: 0o600 });
  env = {
    KUBECONFIG: kubeconfig,
    CLUSTER_NAME: 'kill-cluster',
    RUNNER_NAMESPACES: NS,
    SQLITE_PATH: join(dir, 'runner-medic.db'),
    HOST: '127.0.0.1',
    PORT: '0',
    PROBE_PORT: '0',
    POD_NAMESPACE: 'runner-medic',
    GITHUB_WEBHOOK_SECRET: 'serve-leader-kill-secret',
    GITHUB_APP_CREDENTIALS: JSON.stringify({
      appId: github.app.appId,
      privateKey: github.app.privateKey,
    }),
    GITHUB_API_URL: github.baseUrl,
    LEASE_DURATION_SECONDS: '3',
    RENEW_DEADLINE_SECONDS: '2',
    RETRY_PERIOD_SECONDS: '1',
    SWEEP_SECONDS: '2',
    RUNNER_MEDIC_TEST_STALE_CLAIM_SECONDS: '3',
    RUNNER_MEDIC_VERBOSE: 'true',
  };
}, CHILD_TIMEOUT);

afterEach(async () => {
  clearInterval(pace);
  await server.stop();
  await github.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * An EphemeralRunner as ARC 0.9 creates it (labels, controlled by its EphemeralRunnerSet), with
 * the status its controller writes when the runner's pod kept failing: phase Failed, a slot ARC
 * ≤ 0.11 never frees by itself, so rule 1 deletes it without a grace period.
 */
function failedRunner(name: string): { name: string; uid: string } {
  const labels = (component: string) => ({
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    'app.kubernetes.io/version': '0.9.0',
    'actions.github.com/scale-set-name': SCALE_SET,
    'actions.github.com/scale-set-namespace': NS,
  });
  const spec = {
    githubConfigUrl: 'https://github.com/acme',
    githubConfigSecret: 'github-config',
    runnerScaleSetId: 1,
    spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
  };
  const set = server.api.create('arc', 'ephemeralrunnersets', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunnerSet',
    metadata: { name: `${SCALE_SET}-x7k2p`, namespace: NS, labels: labels('runner-set') },
    spec: { replicas: 1, patchID: 0, ephemeralRunnerSpec: spec },
  });
  const er = server.api.create('arc', 'ephemeralrunners', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: {
      name,
      namespace: NS,
      labels: labels('runner'),
      ownerReferences: [
        {
          apiVersion: 'actions.github.com/v1alpha1',
          kind: 'EphemeralRunnerSet',
          name: String(set.metadata.name),
          uid: String(set.metadata.uid),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  });
  server.api.modify(
    'arc',
    'ephemeralrunners',
    NS,
    name,
    (o) =>
      void (o.status = {
        phase: 'Failed',
        reason: 'TooManyPodFailures',
        message: 'Pod has failed to start more than 5 times',
      }),
    { subresource: 'status' },
  );
  return { name, uid: String(er.metadata.uid) };
}

/** runner-medic's changes to the cluster, without the Lease's renewals, as `verb resource/name`. */
const clusterChanges = () =>
  server.audit.entries
    .filter((e) => e.by === SERVICE_ACCOUNT && e.resource !== LEASE && e.code < 300)
    .map((e) => `${e.verb} ${e.resource}/${e.name ?? ''}`);

const githubChanges = () =>
  github
    .audit()
    .filter((e) => e.by === 'runner-medic')
    .map((e) => `${e.verb} ${e.target}`);

const haltedLine = (r: Replica) =>
  jsonLines(r).find((l) => String(l.message).startsWith('test hook: halted'));
/** The action's record in the SQLite store: its claim, and its result once recorded. */
function actionRecord(key: string): { outcome?: string; detail?: string } | undefined {
  const db = new DatabaseSync(env.SQLITE_PATH ?? '');
  try {
    const row = db
      .prepare('SELECT item FROM facts WHERE pk = ? AND sk = ?')
      .get(`ACTION#${key}`, 'ACTION') as { item: string } | undefined;
    const item = row
      ? (JSON.parse(row.item) as { data?: { outcome?: string; detail?: string } })
      : undefined;
    return item?.data;
  } finally {
    db.close();
  }
}

/**
 * Replica a leads, halted at `halt`; replica b follows. An EphemeralRunner fails: a deletes it
 * and halts. Then a is SIGKILLed, and b takes the Lease once it expires.
 */
async function killTheLeaderMidAction(
  halt: 'before-result' | 'after-result',
  both: Replica[],
): Promise<{ a: Replica; b: Replica; key: string; deleted: string[] }> {
  const a = startReplica('runner-medic-a', { ...env, RUNNER_MEDIC_TEST_HALT: halt });
  both.push(a);
  await until('replica a takes the Lease', () => leads(a), both);
  const b = startReplica('runner-medic-b', env);
  both.push(b);
  await until('replica b serves', () => b.stderr().includes('/readyz'), both);
  expect(leads(b)).toBe(false);
  const transitions = leaseSpec()?.leaseTransitions ?? 0;

  // A slot ARC will not free: an EphemeralRunner Failed, with no pod.
  const er = failedRunner(`${SCALE_SET}-x7k2p-lost1`);
  await until('replica a acts and halts', () => haltedLine(a) !== undefined, both);
  const key = String(haltedLine(a)?.key);
  expect(key).toContain('delete-ephemeral-runner');
  expect(key).toContain(er.uid);
  const deleted = [`delete ephemeralrunners.actions.github.com/${er.name}`];
  expect(clusterChanges()).toEqual(deleted);

  kill(a);
  expect((await a.exited).signal).toBe('SIGKILL');
  await until('replica b takes the Lease once it expires', () => leads(b), both);
  expect(leaseSpec()).toEqual(
    expect.objectContaining({
      holderIdentity: 'runner-medic-b',
      leaseTransitions: transitions + 1,
    }),
  );
  // The killed leader never released the Lease: b waited for it to expire.
  expect(a.stdout()).not.toContain('lease: released');
  return { a, b, key, deleted };
}

function leaseSpec(): { holderIdentity?: string; leaseTransitions?: number } | undefined {
  const lease = server.api.tryGet('leases', 'runner-medic', 'runner-medic') as
    { spec?: { holderIdentity?: string; leaseTransitions?: number } } | undefined;
  return lease?.spec;
}

/** Waits for two more of b's sweeps: by then anything b would do again, it has done. */
async function twoMoreSweeps(b: Replica, both: Replica[]): Promise<void> {
  const sweeps = () => jsonLines(b).filter((l) => l.message === 'sweep').length;
  const seen = sweeps();
  await until('replica b sweeps twice more', () => sweeps() >= seen + 2, both);
}

const remediations = (r: Replica) => jsonLines(r).filter((l) => l['detail-type'] === 'Remediation');

test(
  'the leader SIGKILLed between an effect and its result: the other replica takes the Lease, re-checks the claim, and nothing is done twice',
  async () => {
    const both: Replica[] = [];
    try {
      const { a, b, key, deleted } = await killTheLeaderMidAction('before-result', both);
      expect(haltedLine(a)?.message).toBe(
        'test hook: halted before recording the result of an action',
      );

      await until(
        'replica b re-checks the claim',
        () => jsonLines(b).some((l) => l.message === 'claim without result re-checked'),
        both,
      );
      expect(jsonLines(b).filter((l) => l.message === 'claim without result re-checked')).toEqual([
        expect.objectContaining({ key, effectInPlace: true }),
      ]);
      expect(actionRecord(key)).toEqual(
        expect.objectContaining({
          outcome: 'succeeded',
          detail: 'result lost; re-checked: the effect is in place',
        }),
      );
      await twoMoreSweeps(b, both);
      expect(clusterChanges()).toEqual(deleted);
      expect(githubChanges()).toEqual([]);
      expect(jsonLines(b).filter((l) => l.message === 'remediation')).toEqual([]);
      // The audit trail still tells of the delete a did: b tells it, once, from the re-check.
      expect(remediations(b).map((l) => l.detail)).toEqual([
        expect.objectContaining({
          key,
          outcome: 'succeeded',
          outcomeDetail: 'result lost; re-checked: the effect is in place',
        }),
      ]);
    } finally {
      for (const r of both) kill(r);
      await Promise.all(both.map((r) => r.exited));
    }
  },
  CHILD_TIMEOUT,
);

test(
  'the leader SIGKILLed between the result and its audit event: the other replica takes the Lease, publishes the audit event once, and nothing is done twice',
  async () => {
    const both: Replica[] = [];
    try {
      const { a, b, key, deleted } = await killTheLeaderMidAction('after-result', both);
      expect(haltedLine(a)?.message).toBe(
        'test hook: halted after recording the result of an action, before its audit event',
      );
      expect(actionRecord(key)).toEqual(
        expect.objectContaining({ outcome: 'succeeded', detail: 'done' }),
      );
      expect(remediations(a)).toEqual([]);

      // b's first sweep publishes what the outbox holds: the audit event a never published.
      await until('replica b publishes the audit event', () => remediations(b).length > 0, both);
      await twoMoreSweeps(b, both);
      expect(remediations(b).map((l) => (l.detail as { key?: string }).key)).toEqual([key]);
      expect(remediations(b)[0]?.detail).toEqual(
        expect.objectContaining({ action: 'delete-ephemeral-runner', outcome: 'succeeded' }),
      );
      expect(clusterChanges()).toEqual(deleted);
      expect(githubChanges()).toEqual([]);
      expect(jsonLines(b).filter((l) => l.message === 'remediation')).toEqual([]);
    } finally {
      for (const r of both) kill(r);
      await Promise.all(both.map((r) => r.exited));
    }
  },
  CHILD_TIMEOUT,
);
