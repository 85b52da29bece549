/**
 * The doctor against the twins seeded with findings (sandbox/doctor-sandbox.ts): real
 * @kubernetes/client-node and octokit calls over loopback to sim/kube and sim/github. One world
 * for the whole file; each test asserts on the JSON report.
 */
import { KUBE_ACCESS } from '../../functions/adapters/kubernetes/kube-access.js';
import type { DoctorCheck } from '../../functions/doctor/doctor-check.js';
import { exitCodeOf, reportOf } from '../../functions/doctor/doctor-check.js';
import type { DoctorSandbox } from '../../sandbox/doctor-sandbox.js';
import { startDoctorSandbox } from '../../sandbox/doctor-sandbox.js';
import { runDoctor } from '../../functions/doctor/run-doctor.js';

const noAws = () => {
  throw new Error('the sandbox needs no AWS client');
};

let sandbox: DoctorSandbox;
let checks: DoctorCheck[];
let exitCode: number;
let kubeRequests: { by: string; method: string; path: string }[];

beforeAll(async () => {
  sandbox = await startDoctorSandbox({ findings: true });
  const before = sandbox.cluster.audit.requests.length;
  const results = await runDoctor({
    env: sandbox.env,
    clock: sandbox.clock,
    secretClients: { ssm: noAws, secretsManager: noAws },
    repositories: sandbox.repositories,
  });
  checks = reportOf(results).checks;
  exitCode = exitCodeOf(results);
  kubeRequests = sandbox.cluster.audit.requests.slice(before);
}, 120_000);

afterAll(() => sandbox?.stop());

const check = (id: string): DoctorCheck => {
  const found = checks.find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in ${checks.map((c) => c.id).join(', ')}`);
  return found;
};

test('the report is one document of checks with exactly id, status, why and what', () => {
  expect(checks.length).toBeGreaterThan(15);
  for (const c of checks) {
    expect(Object.keys(c).sort()).toEqual(['id', 'status', 'what', 'why']);
    expect(['ok', 'finding', 'error']).toContain(c.status);
    expect(c.why.length).toBeGreaterThan(10);
  }
  expect(new Set(checks.map((c) => c.id)).size).toBe(checks.length);
});

test('findings give exit code 1', () => {
  expect(exitCode).toBe(1);
});

test('a policy in dry run is reported as such', () => {
  expect(check('configuration.policy')).toMatchObject({ status: 'finding' });
  expect(check('configuration.policy').why).toMatch(/dry run/);
  expect(check('configuration.settings').status).toBe('ok');
  expect(check('configuration.clusters').status).toBe('ok');
});

test('failed webhook deliveries of the last hour are counted by status', () => {
  const c = check('github.webhook-deliveries');
  expect(c.status).toBe('finding');
  const delivered = sandbox.github.deliveries().filter((d) => d.dropped).length;
  expect(delivered).toBeGreaterThan(0);
  expect(c.why).toContain(`${delivered} of ${delivered} webhook deliveries`);
  expect(c.why).toContain(`${delivered} × no connection`);
});

test('installations and their grants are read from GitHub', () => {
  expect(check('github.installations')).toMatchObject({ status: 'ok' });
  expect(check('github.installations').why).toContain('acme');
});

test('an installation that never accepted checks: write is a permissions finding', () => {
  const c = check('github.permissions');
  expect(c.status).toBe('finding');
  expect(c.why).toContain('acme: checks: read (needs write)');
  expect(c.why).toContain('without checks it cannot explain its actions with a check run');
});

test('a registration of a scale set with no EphemeralRunner is an orphan', () => {
  const c = check('github.orphan-registrations');
  expect(c.status).toBe('finding');
  expect(c.why).toContain('acme/arc-linux-abandoned-runner');
  // Registrations that do have their EphemeralRunner are not named.
  expect(c.why).not.toMatch(/arc-linux-[a-z0-9]{5}-runner-/);
});

test('RBAC is checked by SelfSubjectAccessReview for every call the adapter makes', () => {
  const c = check('cluster.sandbox.rbac');
  expect(c.status).toBe('finding');
  expect(c.why).toContain('patch actions.github.com/ephemeralrunners in arc-runners');
  expect(c.why).not.toContain('delete actions.github.com/ephemeralrunners');
  const reviews = kubeRequests.filter((r) => r.path.includes('selfsubjectaccessreviews'));
  // One review per call kube-access.ts lists as made whatever the configuration (namespaced
  // ones in the one namespace).
  expect(reviews).toHaveLength(KUBE_ACCESS.filter((a) => a.when === 'always').length);
});

test('the doctor itself only reads: no mutating Kubernetes call', () => {
  const writes = kubeRequests.filter(
    (r) =>
      r.by === 'runner-medic' && r.method !== 'GET' && !r.path.includes('selfsubjectaccessreviews'),
  );
  expect(writes).toEqual([]);
});

test('the cluster is reachable and ARC is current', () => {
  expect(check('cluster.sandbox.reachable').status).toBe('ok');
  expect(check('cluster.sandbox.arc-version')).toMatchObject({ status: 'ok' });
  expect(check('cluster.sandbox.arc-version').why).toContain('0.15.1');
});

test('an EphemeralRunner stuck Failed is named with its reason', () => {
  const c = check('cluster.sandbox.failed-runners');
  expect(c.status).toBe('finding');
  expect(c.why).toMatch(/arc-runners\/arc-gpu-\w+-runner-\w+ \(InvalidPod\)/);
});

test('a runner pod on a NotReady node is named with its node', () => {
  const c = check('cluster.sandbox.pods-on-unready-nodes');
  expect(c.status).toBe('finding');
  expect(c.why).toMatch(/on node-\w \(NotReady\)/);
});

test('an EphemeralRunner whose pod is gone is named', () => {
  const c = check('cluster.sandbox.runners-without-pod');
  expect(c.status).toBe('finding');
  expect(c.why).toMatch(/1 EphemeralRunners have had no pod/);
});

test('pod templates without graceful stop or with the default grace period are findings', () => {
  expect(check('cluster.sandbox.graceful-stop')).toMatchObject({ status: 'finding' });
  expect(check('cluster.sandbox.graceful-stop').why).toContain('scale set arc-linux');
  expect(check('cluster.sandbox.termination-grace-period')).toMatchObject({ status: 'finding' });
  expect(check('cluster.sandbox.dind-sidecar').status).toBe('ok');
});

test('runner pods on Karpenter nodes without do-not-disrupt are findings', () => {
  const c = check('cluster.sandbox.karpenter-do-not-disrupt');
  expect(c.status).toBe('finding');
  expect(c.why).toMatch(/pod arc-runners\/arc-linux-/);
});

test('a job queued longer than 15 minutes is reported under its scale set', () => {
  const c = check('cluster.sandbox.queued-jobs');
  expect(c.status).toBe('finding');
  expect(c.why).toMatch(/arc-gpu: 1 \(acme\/app#\d+\)/);
  expect(c.why).not.toContain('arc-linux:');
});

test('a cluster that sends events but is not configured is named, with when it last did', () => {
  const c = check('events.unknown-clusters');
  expect(c.status).toBe('finding');
  expect(c.why).toContain('old-staging (last 10 min ago)');
  expect(c.why).not.toContain('sandbox (');
});

test('a configured cluster whose exporter has been silent for 30 minutes is a finding', () => {
  const c = check('events.exporter-silent');
  expect(c.status).toBe('finding');
  expect(c.why).toContain('No exporter event in the last 30 minutes from: sandbox (last 3 h ago)');
});
