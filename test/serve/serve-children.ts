/**
 * `runner-medic serve` as child processes of the bin launcher (bin/runner-medic.mjs),
 * as the container runs it: on the system clock, each in its own process group so that a SIGKILL
 * takes the launcher, tsx and serve's node at once, as the kubelet's SIGKILL takes the container.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Replica {
  name: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** How many times a wait looks at its condition, 250 ms apart, before it fails. */
const LOOKS = 240;

export function startReplica(name: string, env: Record<string, string>): Replica {
  const child = spawn('node_modules/.bin/node', ['bin/runner-medic.mjs', 'serve'], {
    env: { ...process.env, ...env, POD_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { name, child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Looks at `condition` up to LOOKS times; fails with `what` (and the replicas' output). */
export async function until(
  what: string,
  condition: () => boolean,
  replicas: Replica[],
): Promise<void> {
  for (let look = 0; look < LOOKS; look++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `${what}: not after ${LOOKS} looks\n${replicas.map((r) => `--- ${r.name}\n${r.stderr()}\n${r.stdout()}`).join('\n')}`,
  );
}

/** SIGKILL to the replica's whole process group. */
export function kill(replica: Replica): void {
  try {
    if (replica.child.pid) process.kill(-replica.child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export const leads = (r: Replica) => r.stdout().includes('"message":"took the Lease: acting"');

/** The replica's JSON lines on stdout, parsed. */
export function jsonLines(r: Replica): Record<string, unknown>[] {
  return r
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
