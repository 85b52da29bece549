import { spawn, type SpawnOptions } from 'node:child_process';

/** How a child process ended, and everything it wrote. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (stdin closed), collecting its output. */
export function runToEnd(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'stdio'> = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
