/** The doctor's pure parts: grants, delivery failures, RBAC attributes, exit codes, the table. */
import { formatTable } from '../../functions/cli/format-table.js';
import { runCli, stageEnvironment } from '../../functions/cli/main.js';
import { accessToReview } from '../../functions/doctor/cluster-checks.js';
import type { CheckResult } from '../../functions/doctor/doctor-check.js';
import { exitCodeOf, reportOf } from '../../functions/doctor/doctor-check.js';
import {
  checkQueuedJobs,
  failuresByStatus,
  missingGrants,
} from '../../functions/doctor/github-checks.js';
import { KUBE_ACCESS } from '../../functions/adapters/kubernetes/kube-access.js';

const needs = {
  manifest: 'infra/github-app/manifest-org.json',
  permissions: { actions: 'write', checks: 'read', metadata: 'read' },
  events: ['workflow_job', 'workflow_run'],
};

test('missingGrants names each permission below what is needed, and each missing event', () => {
  const installation = {
    id: 1,
    account: 'acme',
    accountType: 'Organization',
    permissions: { actions: 'read', checks: 'write', metadata: 'read' },
    events: ['workflow_job'],
  };
  expect(missingGrants(installation, needs)).toEqual([
    'actions: read (needs write)',
    'event workflow_run',
  ]);
  expect(
    missingGrants(
      { ...installation, permissions: { ...needs.permissions }, events: needs.events },
      needs,
    ),
  ).toEqual([]);
  expect(missingGrants({ ...installation, permissions: {} }, needs)).toContain(
    'metadata: none (needs read)',
  );
});

test('failuresByStatus counts non-2xx deliveries by status, 0 for no connection', () => {
  const attempt = (statusCode: number) => ({
    id: 1,
    guid: 'g',
    deliveredAt: 0,
    statusCode,
    event: 'workflow_job',
    redelivery: false,
  });
  expect(failuresByStatus([200, 202, 0, 0, 500, 401].map(attempt))).toEqual({
    '0': 2,
    '500': 1,
    '401': 1,
  });
  expect(failuresByStatus([attempt(204)])).toEqual({});
});

test('accessToReview asks for every declared call, namespaced ones in each runner namespace', () => {
  const always = KUBE_ACCESS.filter((a) => a.when === 'always');
  const scoped = accessToReview(['ns-a', 'ns-b']);
  const namespacedCount = always.filter((a) => a.scope === 'namespaced').length;
  const clusterCount = always.filter((a) => a.scope === 'cluster').length;
  expect(scoped).toHaveLength(namespacedCount * 2 + clusterCount);
  expect(scoped).toContainEqual({
    verb: 'patch',
    group: 'actions.github.com',
    resource: 'ephemeralrunners',
    namespace: 'ns-b',
  });
  // Without namespaces: every call, the all-namespaces lists included, none namespaced.
  const unscoped = accessToReview(undefined);
  expect(unscoped).toHaveLength(KUBE_ACCESS.length);
  expect(unscoped.every((a) => a.namespace === undefined)).toBe(true);
});

test('exit code: 2 when something was unreachable, else 1 with findings, else 0', () => {
  const okCheck: CheckResult = { id: 'a', status: 'ok', why: 'fine', what: 'Nothing to do.' };
  const findingCheck: CheckResult = { ...okCheck, id: 'b', status: 'finding' };
  const unavailable: CheckResult = { ...okCheck, id: 'c', status: 'error' };
  const unreachable: CheckResult = { ...unavailable, id: 'd', unreachable: true };
  expect(exitCodeOf([okCheck, unavailable])).toBe(0);
  expect(exitCodeOf([okCheck, findingCheck, unavailable])).toBe(1);
  expect(exitCodeOf([findingCheck, unreachable])).toBe(2);
  expect(reportOf([unreachable]).checks[0]).toEqual({
    id: 'd',
    status: 'error',
    why: 'fine',
    what: 'Nothing to do.',
  });
});

test('queued jobs are matched to scale sets by runs-on label, case-insensitively, past the limit', () => {
  const now = 100 * 60_000;
  const jobs = [
    { repo: 'acme/app', id: 1, labels: ['ARC-Linux'], createdAt: now - 20 * 60_000 },
    { repo: 'acme/app', id: 2, labels: ['arc-linux'], createdAt: now - 5 * 60_000 },
    { repo: 'acme/app', id: 3, labels: ['other'], createdAt: 0 },
  ];
  const c = checkQueuedJobs('q', ['arc-linux'], jobs, now, 15);
  expect(c.status).toBe('finding');
  expect(c.why).toContain('arc-linux: 1 (acme/app#1)');
  expect(checkQueuedJobs('q', ['arc-linux'], jobs, now, 30).status).toBe('ok');
});

test('the table has one row per check with its status, and the what only for non-ok checks', () => {
  const table = formatTable([
    { id: 'x.ok', status: 'ok', why: 'All good.', what: 'Nothing to do.' },
    { id: 'x.bad', status: 'finding', why: 'Broken.', what: 'Fix it.' },
  ]);
  const lines = table.split('\n');
  expect(lines[1]).toMatch(/^ok\s+x\.ok\s+All good\.$/);
  expect(lines[2]).toMatch(/^FINDING\s+x\.bad\s+Broken\.$/);
  expect(lines[3]).toMatch(/^\s+→ Fix it\.$/);
  expect(table).not.toContain('Nothing to do.');
  expect(lines.at(-1)).toBe('1 ok, 1 findings, 0 errors');
});

test('--stage fills in the stage’s parameter names, and keeps what the environment sets', () => {
  const env = stageEnvironment({ CLUSTERS: '{}', GITHUB_APP_CREDENTIALS_ARN: 'arn:x' }, 'prod');
  expect(env).toMatchObject({
    TABLE_NAME: 'runner-medic-prod',
    GITHUB_WEBHOOK_SECRET_PARAMETER: '/runner-medic/prod/github-webhook-secret',
    POLICY_PARAMETER: '/runner-medic/prod/policy',
    GITHUB_APP_CREDENTIALS_ARN: 'arn:x',
    CLUSTERS: '{}',
  });
  expect(env.GITHUB_APP_CREDENTIALS_PARAMETER).toBeUndefined();
});

test('bad command lines are refused with exit code 64 and a pointer to --help', async () => {
  for (const argv of [
    ['rescue'],
    ['doctor', '--bogus'],
    ['doctor', '--stage', 'a/b'],
    ['doctor', '--queued-minutes', '-3'],
    ['doctor', '--repo', 'not a repo'],
    ['doctor', '--sandbox', '--stage', 'prod'],
  ]) {
    const err: string[] = [];
    const code = await runCli(argv, { env: {}, out: () => undefined, err: (t) => err.push(t) });
    expect({ argv, code }).toEqual({ argv, code: 64 });
    expect(err.join('')).toContain('runner-medic --help');
  }
});

test('a missing configuration is a set of findings, not a crash', async () => {
  const out: string[] = [];
  const code = await runCli(['doctor', '--json'], {
    env: {},
    out: (t) => out.push(t),
    err: () => undefined,
  });
  const report = JSON.parse(out.join('')) as { checks: { id: string; status: string }[] };
  expect(code).toBe(1);
  expect(report.checks.find((c) => c.id === 'configuration.settings')?.status).toBe('finding');
  expect(report.checks.find((c) => c.id === 'configuration.webhook-secret')?.status).toBe(
    'finding',
  );
  expect(report.checks.find((c) => c.id === 'configuration.github-app')?.status).toBe('finding');
  expect(report.checks.find((c) => c.id === 'github')?.status).toBe('error');
});
