import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Octokit } from '@octokit/core';
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods';
import { parseScenario } from '../../sandbox/scenario/scenario-schema.js';

const SCENARIO = 'test/scenarios/seed-karpenter-mid-job.yaml';
const RestOctokit = Octokit.plugin(restEndpointMethods);

interface Twin {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout; rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The twin in its own process group, as a terminal would place it: `npm run twin` itself, or the
 * command its script runs (node), whose exit code is the twin's (npm reports a SIGINT as a signal).
 */
function startTwin(args: string[], via: 'npm' | 'script' = 'script'): Twin {
  const script = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { twin: string } }
  ).scripts.twin.split(' ');
  const [command, ...prefix] =
    via === 'npm'
      ? ['npm', 'run', '--silent', 'twin', '--']
      : [`node_modules/.bin/${script[0] ?? 'node'}`, ...script.slice(1)];
  const child = spawn(command ?? 'npm', [...prefix, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // 'close', not 'exit': 'exit' can come before the pipes are read to their end, and npm can exit
  // before the twin's node has written its last line. 'close' waits for every writer and the data.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      resolve({ code, signal });
      wake();
    }),
  );
  return {
    child,
    output: () => stdout,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = pattern.exec(stdout);
          if (found) return resolve(found);
          if (child.exitCode !== null || child.signalCode !== null)
            return reject(new Error(`npm run twin exited:\n${stderr}\n${stdout}`));
          waiters.push(check);
        };
        check();
      }),
  };
}

/** Ctrl-C: SIGINT to the whole foreground group (npm and the twin's node). */
function interrupt(twin: Twin, signal: NodeJS.Signals = 'SIGINT'): void {
  if (twin.child.pid && twin.child.exitCode === null) process.kill(-twin.child.pid, signal);
}

describe('npm run twin: both twins on loopback for kubectl, curl and runner-medic', () => {
  let twin: Twin | undefined;
  afterEach(async () => {
    if (!twin?.child.pid) return;
    try {
      // The whole group, even when its leader is gone: the twin's node may outlive npm.
      process.kill(-twin.child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
    await twin.exited;
  });

  it('prints a kubeconfig and the API URL that real clients use, then stops cleanly on Ctrl-C', async () => {
    twin = startTwin([SCENARIO, '--speed', '5']);
    const kubeconfig = (await twin.waitFor(/^KUBECONFIG=(.+)$/m))[1] ?? '';
    const apiUrl = (await twin.waitFor(/^GITHUB_API_URL=(.+)$/m))[1] ?? '';
    const token = (await twin.waitFor(/^GITHUB_TOKEN=(.+)$/m))[1] ?? '';
    const envFile = (await twin.waitFor(/^RUNNER_MEDIC_ENV=(.+)$/m))[1] ?? '';
    const runId = Number((await twin.waitFor(/triggered acme\/app ci: run (\d+)/))[1]);

    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const nodes = await kc.makeApiClient(CoreV1Api).listNode();
    const scenario = parseScenario(readFileSync(SCENARIO, 'utf8'));
    expect(nodes.items.map((n) => n.metadata?.name)).toEqual(
      expect.arrayContaining(scenario.clusters[0]?.nodes.map((n) => n.name) ?? ['none']),
    );

    const octokit = new RestOctokit({ baseUrl: apiUrl, auth: token });
    const { data: run } = await octokit.rest.actions.getWorkflowRun({
      owner: 'acme',
      repo: 'app',
      run_id: runId,
    });
    expect(run).toMatchObject({ id: runId, repository: { full_name: 'acme/app' } });
    expect(['queued', 'in_progress']).toContain(run.status);
    expect(readFileSync(envFile, 'utf8')).toContain(`export GITHUB_API_URL='${apiUrl}'`);

    interrupt(twin);
    // Ctrl-C reaches npm too: npm reports the interrupt as 130 when the signal lands before the
    // twin's own clean exit (0) reaches it. The twin's clean stop is the two lines below.
    const exited = await twin.exited;
    expect(exited.signal).toBeNull();
    expect([0, 130]).toContain(exited.code);
    expect(twin.output()).toMatch(/^twin: stopped$/m);
    expect(existsSync(kubeconfig)).toBe(false);
  }, 180_000);

  it('explains itself with --help, and refuses an unknown option with exit code 2', async () => {
    twin = startTwin(['--help'], 'npm');
    expect(await twin.exited).toEqual({ code: 0, signal: null });
    expect(twin.output()).toMatch(/^usage: npm run twin -- \[SCENARIO\.yaml\]/);

    twin = startTwin(['--sped', '3'], 'npm');
    expect((await twin.exited).code).toBe(2);
  }, 150_000);
});
