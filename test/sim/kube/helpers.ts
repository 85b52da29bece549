import { execFileSync } from 'node:child_process';

/** Polls (real time) until `check` returns a value, for informers and watches over sockets. */
export async function eventually<T>(
  check: () => T | undefined | false,
  timeoutMs = 5_000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function kubectlPath(): string | undefined {
  try {
    return (
      execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

export function minimalPod(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'demo' } },
    spec: { containers: [{ name: 'runner', image: 'ghcr.io/actions/actions-runner:latest' }] },
    ...extra,
  };
}
