/**
 * package.json's lint:shell, run the way npm runs it (sh -c), with a PATH that holds a stand-in
 * shellcheck or none, so the test does not depend on what this machine has installed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const scripts = (
  JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
).scripts;

let bin: string;

beforeEach(() => {
  bin = mkdtempSync(join(tmpdir(), 'lint-shell-'));
  for (const tool of ['find', 'xargs']) {
    const found = spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
    symlinkSync(found.stdout.trim(), join(bin, tool));
  }
});

afterEach(() => rmSync(bin, { recursive: true, force: true }));

function stubShellcheck(exitCode: number): string {
  const calls = join(bin, 'calls.txt');
  const stub = join(bin, 'shellcheck');
  writeFileSync(stub, `#!/bin/sh\nprintf '%s\\n' "$@" >>'${calls}'\nexit ${exitCode}\n`);
  chmodSync(stub, 0o755);
  return calls;
}

function lintShell() {
  return spawnSync('/bin/sh', ['-c', scripts['lint:shell'] ?? 'exit 99'], {
    encoding: 'utf8',
    env: { PATH: bin },
  });
}

describe('npm run lint:shell', () => {
  it('is part of npm test', () => {
    // Directly, or as a stage of test/helpers/run-stages.mjs (which runs `npm run <stage>`).
    expect(scripts.test).toMatch(/npm run lint:shell|run-stages\.mjs [^&]*\blint:shell\b/);
  });

  it('prints a clear skip line and succeeds when shellcheck is not installed', () => {
    const run = lintShell();

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('lint:shell: SKIPPED, shellcheck is not installed');
  });

  it("runs shellcheck on the repository's shell scripts, not on node_modules", () => {
    const calls = stubShellcheck(0);

    const run = lintShell();

    expect(run.status).toBe(0);
    expect(run.stdout).toContain('shellcheck passed');
    const checked = readFileSync(calls, 'utf8').trim().split('\n');
    expect(checked).toContain('./infra/kubernetes/runner/graceful-stop.sh');
    expect(checked.filter((f) => f.includes('node_modules'))).toEqual([]);
  });

  it('fails when shellcheck finds a problem', () => {
    stubShellcheck(1);

    const run = lintShell();

    expect(run.status).not.toBe(0);
    expect(run.stdout).not.toContain('shellcheck passed');
  });
});
