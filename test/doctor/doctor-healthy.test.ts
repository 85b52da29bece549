/**
 * The doctor against a healthy set-up on the twins: the shipped RBAC, a scale set with the
 * graceful stop, a grace period above its timeout and do-not-disrupt, a policy that acts, and a
 * webhook receiver that takes every delivery, an exporter heard from a minute ago. Every check
 * is ok; the exit code is 0.
 */
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

beforeAll(async () => {
  sandbox = await startDoctorSandbox({ findings: false });
  const results = await runDoctor({
    env: sandbox.env,
    clock: sandbox.clock,
    secretClients: { ssm: noAws, secretsManager: noAws },
    repositories: sandbox.repositories,
  });
  checks = reportOf(results).checks;
  exitCode = exitCodeOf(results);
}, 120_000);

afterAll(() => sandbox?.stop());

test('a healthy set-up has no finding and exits 0', () => {
  expect(checks.filter((c) => c.status === 'finding')).toEqual([]);
  expect(exitCode).toBe(0);
});

test('every check is ok, the Events checks included', () => {
  const notOk = checks.filter((c) => c.status !== 'ok').map((c) => c.id);
  expect(notOk).toEqual([]);
  expect(checks.map((c) => c.id)).toEqual(
    expect.arrayContaining(['events.unknown-clusters', 'events.exporter-silent']),
  );
});

test('each area was checked, not skipped', () => {
  const ids = checks.map((c) => c.id);
  expect(ids).toEqual(
    expect.arrayContaining([
      'configuration.policy',
      'github.installations',
      'github.permissions',
      'github.webhook-deliveries',
      'github.orphan-registrations',
      'cluster.sandbox.reachable',
      'cluster.sandbox.rbac',
      'cluster.sandbox.arc-version',
      'cluster.sandbox.failed-runners',
      'cluster.sandbox.pods-on-unready-nodes',
      'cluster.sandbox.runners-without-pod',
      'cluster.sandbox.graceful-stop',
      'cluster.sandbox.termination-grace-period',
      'cluster.sandbox.dind-sidecar',
      'cluster.sandbox.karpenter-do-not-disrupt',
      'cluster.sandbox.queued-jobs',
    ]),
  );
});

test('the deliveries that reached the receiver are counted as successes', () => {
  const sent = sandbox.github.deliveries().filter((d) => d.statusCode === 202).length;
  expect(sent).toBeGreaterThan(0);
  expect(checks.find((c) => c.id === 'github.webhook-deliveries')?.why).toBe(
    `All ${sent} webhook deliveries of the last hour succeeded.`,
  );
});

test('the graceful stop and grace period are recognised in the running template', () => {
  const grace = checks.find((c) => c.id === 'cluster.sandbox.termination-grace-period');
  expect(grace?.why).toContain('terminationGracePeriodSeconds (960) covers the 900 s wait');
  const pods = checks.find((c) => c.id === 'cluster.sandbox.karpenter-do-not-disrupt');
  expect(pods?.why).toMatch(/^pod arc-runners\/arc-linux-.*do-not-disrupt is "true"/);
});

test('without --repo, queued jobs are looked for in every repository of the installation', async () => {
  const results = await runDoctor({
    env: sandbox.env,
    clock: sandbox.clock,
    secretClients: { ssm: noAws, secretsManager: noAws },
  });
  // GET /installation/repositories lists acme/app; its one job is running, none waits.
  expect(results.find((c) => c.id === 'cluster.sandbox.queued-jobs')).toMatchObject({
    status: 'ok',
  });
}, 120_000);
