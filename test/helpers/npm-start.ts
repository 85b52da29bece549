import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface StartedProcess {
  url: string;
  stdoutLines: () => string[];
  /** Resolves with stderr once it matches `pattern`; rejects, with the output, if the process exits first. */
  stderrMatching(pattern: RegExp): Promise<string>;
  stop(): Promise<void>;
}

export interface FinishedProcess {
  code: number | null;
  stdout: string;
  stderr: string;
}

const KILL_AFTER_MS = 10_000;

/** `npm start` as a user runs it, in its own process group so that stopping it stops tsx too. */
function spawnNpmStart(env: Record<string, string>, args: string[]): ChildProcess {
  return spawn('npm', ['start', '--silent', ...(args.length > 0 ? ['--', ...args] : [])], {
    env: { ...process.env, PORT: '0', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Stops the process group: SIGTERM, then SIGKILL if it has not exited in time. */
function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => signalGroup(child, 'SIGKILL'), KILL_AFTER_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      // Whatever the group still holds (tsx's node, a twin) goes with it.
      signalGroup(child, 'SIGKILL');
      resolve();
    });
    signalGroup(child, 'SIGTERM');
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs `npm start` on a free port and waits for its banner. A process that exits before the
 * banner, or while a caller waits on its stderr, fails the wait at once with what it printed.
 */
export function startNpmStart(env: Record<string, string> = {}): Promise<StartedProcess> {
  const child = spawnNpmStart(env, []);
  let stdout = '';
  let stderr = '';
  let exited: string | null = null;
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    wake();
  });
  child.once('exit', (code, signal) => {
    exited = `npm start exited (code ${code}, signal ${signal}):\nstderr:\n${stderr}\nstdout:\n${stdout}`;
    wake();
  });

  const waitFor = <T>(ready: () => T | undefined): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = ready();
        if (value !== undefined) resolve(value);
        else if (exited !== null) reject(new Error(exited));
        else waiters.push(check);
      };
      check();
    });

  return waitFor(() => /local runtime on (http:\/\/\S+)/.exec(stderr)?.[1]).then((url) => ({
    url,
    stdoutLines: () => stdout.split('\n').filter((line) => line.trim() !== ''),
    stderrMatching: (pattern) => waitFor(() => (pattern.test(stderr) ? stderr : undefined)),
    stop: () => stopGroup(child),
  }));
}

/** Runs `npm start -- ARGS` to its end (e.g. `--once`), bounded: stopped after `timeoutMs`. */
export function runNpmStart(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<FinishedProcess> {
  const child = spawnNpmStart(env, args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => {
    const timer = setTimeout(() => void stopGroup(child), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      signalGroup(child, 'SIGKILL');
      // The output is whole once the pipes close, which 'exit' can precede.
      child.once('close', () => resolve({ code, stdout, stderr }));
    });
  });
}
