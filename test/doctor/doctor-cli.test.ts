/**
 * The command line as a user runs it, in child processes: `npx runner-medic` (the package.json
 * bin, through its launcher) and `npm run doctor`. Exit codes 0 (help), 1 (the sandbox's
 * findings) and 2 (a cluster and GitHub on closed loopback ports).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import { runToEnd, type Finished } from '../helpers/run-to-end.js';

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return runToEnd(command, args, { env: { ...process.env, ...env } });
}

/** A loopback port that was free a moment ago and has nothing listening now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

const CHILD_TIMEOUT = 180_000;

test(
  'npx runner-medic --help lists the commands and exits 0',
  async () => {
    const result = await run('npx', ['--no-install', 'runner-medic', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: runner-medic <command>/m);
    for (const command of ['doctor', 'rescue', 'replay', 'help'])
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    for (const option of ['--sandbox', '--yes', '--since <duration>', '--events <file>'])
      expect(result.stdout).toContain(option);
  },
  CHILD_TIMEOUT,
);

test(
  'npm run doctor -- --sandbox --json prints one JSON document and exits 1 with its findings',
  async () => {
    const result = await run('npm', ['run', '--silent', 'doctor', '--', '--sandbox', '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { checks: { id: string; status: string }[] };
    const findings = report.checks.filter((c) => c.status === 'finding').map((c) => c.id);
    expect(findings).toEqual(
      expect.arrayContaining([
        'configuration.policy',
        'github.webhook-deliveries',
        'github.permissions',
        'cluster.sandbox.failed-runners',
        'cluster.sandbox.rbac',
      ]),
    );
  },
  CHILD_TIMEOUT,
);

test(
  'a cluster and GitHub that cannot be reached give exit code 2',
  async () => {
    const [kubePort, githubPort] = [await closedPort(), await closedPort()];
    const kubeconfig = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'gone', cluster: { server: `https://127.0.0.1:${kubePort}` } }],
      users: [{ name: 'medic', user: { token: 'x' } }],
      contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'medic' } }],
      'current-context': 'gone',
    });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const result = await run('npm', ['run', '--silent', 'doctor', '--', '--json'], {
      TABLE_NAME: 'runner-medic-test',
      GITHUB_WEBHOOK_SECRET: 'secret',
      GITHUB_APP_CREDENTIALS: JSON.stringify({
        appId: 1,
        privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      }),
      GITHUB_API_URL: `http://127.0.0.1:${githubPort}`,
      CLUSTERS: JSON.stringify({ gone: { kind: 'kubeconfig', kubeconfig } }),
      POLICY: 'dryRun: false',
    });
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as {
      checks: { id: string; status: string; why: string }[];
    };
    const reachable = report.checks.find((c) => c.id === 'cluster.gone.reachable');
    expect(reachable?.status).toBe('error');
    expect(reachable?.why).toMatch(/ECONNREFUSED|connect/);
    expect(report.checks.find((c) => c.id === 'github.installations')?.status).toBe('error');
  },
  CHILD_TIMEOUT,
);
