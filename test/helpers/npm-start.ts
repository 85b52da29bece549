import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface StartedProcess {
  url: string;
  stdoutLines: () => string[];
  /** Resolves with stderr once it matches `pattern` (or rejects when the process exits). */
  stderrMatching(pattern: RegExp): Promise<string>;
  stop(): Promise<void>;
}

/** Runs `npm start` as a user would, on a free port, and waits for its banner. */
export function startNpmStart(env: Record<string, string> = {}): Promise<StartedProcess> {
  const child: ChildProcess = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, PORT: '0', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));

  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    });

  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      for (const wake of waiters.splice(0)) wake();
      const match = /local runtime on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        resolve({
          url: match[1],
          stdoutLines: () => stdout.split('\n').filter((line) => line.trim() !== ''),
          stderrMatching: (pattern) =>
            new Promise((done, fail) => {
              const check = () => {
                if (pattern.test(stderr)) done(stderr);
                else if (child.exitCode !== null) fail(new Error(`npm start exited: ${stderr}`));
                else waiters.push(check);
              };
              check();
            }),
          stop,
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
  });
}
