/**
 * `runner-medic serve --sandbox --once` as a user runs it, in a child process: the default
 * scenario (the Karpenter seed, as `npm start -- --once` plays it) through serve's in-cluster
 * runtime on the twins. The narration is on stderr, the audit events as JSON lines on stdout, and
 * the exit code is the outcome's.
 */
import { runToEnd, type Finished } from '../helpers/run-to-end.js';

function run(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return runToEnd('npx', ['--no-install', 'tsx', 'sandbox/cli.ts', ...args], {
    env: { ...process.env, ...env },
  });
}

const CHILD_TIMEOUT = 600_000;
/** As fast as it goes: the simulated hour is not paced against the wall clock. */
const UNPACED = { SANDBOX_SPEED: '100000' };

test(
  'serve --sandbox --once narrates the Karpenter seed recovered through serve and exits 0',
  async () => {
    const result = await run(['serve', '--sandbox', '--once'], UNPACED);
    expect({ code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    const { stderr } = result;
    expect(stderr).toContain('playing seed-karpenter-mid-job through runner-medic serve');
    expect(stderr).toMatch(/fault {3}disrupt-node in eks-ci: arc-linux-\w+-runner-\w+/);
    expect(stderr).toMatch(
      /medic {3}delete-ephemeral-runner arc-linux-\w+-runner-\w+ → succeeded {2}\[rule-1-free-poisoned-slot\]/,
    );
    expect(stderr).toMatch(
      /medic {3}rerun-failed-jobs acme\/app run \d+ → succeeded {2}\[rule-3-rerun-killed-job\]/,
    );
    expect(stderr).toMatch(/github {2}job build #2 completed on .* \(success\)/);
    expect(stderr).toContain('PASSED  seed-karpenter-mid-job');
    expect(stderr).toContain('runner-medic serve recovered every job the scenario expects.');

    // stdout: JSON lines only; the two audit events, and the replica taking the Lease.
    const lines = result.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const audits = lines.filter((l) => l['detail-type'] === 'Remediation');
    expect(audits.map((a) => (a.detail as { action: string; outcome: string }).action)).toEqual([
      'delete-ephemeral-runner',
      'rerun-failed-jobs',
    ]);
    expect(lines.filter((l) => l.message === 'took the Lease: acting')).toHaveLength(1);
  },
  CHILD_TIMEOUT,
);

test(
  'serve --sandbox without --once is a usage error (64)',
  async () => {
    const alone = await run(['serve', '--sandbox']);
    expect(alone.code).toBe(64);
    expect(alone.stderr).toContain('--sandbox and --once go together');
  },
  CHILD_TIMEOUT,
);
