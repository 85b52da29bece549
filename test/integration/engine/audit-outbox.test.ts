import { spawn } from 'node:child_process';
import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

/**
 * No lost audit event: a process killed with SIGKILL after its action took effect but before the
 * audit event was published leaves the event in the store's outbox, and the next sweep
 * publishes it, once.
 */
const harness = new EngineHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

/** Runs one sweep in a child process and kills it with SIGKILL right after it acts. */
function sweepKilledAfterAct(): Promise<{ acted: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/integration/engine/outbox-child.ts'],
      {
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          OUTBOX_CHILD_SETUP: JSON.stringify(harness.endpoints()),
          OUTBOX_CHILD_HANG_AFTER_ACT: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group: tsx runs the script in a grandchild, which the kill must reach
        // too, or it keeps the pipes open after the test.
        detached: true,
      },
    );
    let out = '';
    let err = '';
    let acted = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /ACTED (\S+)/.exec(out);
      if (m && !acted) {
        acted = m[1] ?? '';
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (_code, signal) =>
      acted ? resolve({ acted, signal }) : reject(new Error(`child ended without acting: ${err}`)),
    );
  });
}

describe('a crash between act and audit', () => {
  it('leaves the audit event in the outbox, and the sweep publishes it once', async () => {
    harness.usePolicy({ allow: { namespaces: [NS] } });
    const name = `${SET}-x7k2p-runner-crash1`;
    seedRunner(harness, seedRunnerSet(harness), name, {
      phase: 'Failed',
      reason: 'TooManyPodFailures',
      message: 'Pod has failed to start more than 5 times',
      ready: false,
    });

    const { acted, signal } = await sweepKilledAfterAct();
    expect(signal).toBe('SIGKILL');
    expect(acted).toContain('delete-ephemeral-runner');
    // The effect happened; its audit event did not reach the bus.
    expect(harness.medicKubeCalls().map((c) => [c.verb, c.name])).toEqual([['delete', name]]);
    expect(harness.remediationEvents()).toEqual([]);

    await harness.clock.advance(60_000);
    await runEngine({ kind: 'sweep' }, harness.engine);
    await runEngine({ kind: 'sweep' }, harness.engine);
    const events = harness.remediationEvents().filter((e) => e.key === acted);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual(
      expect.objectContaining({ action: 'delete-ephemeral-runner', outcome: 'succeeded' }),
    );
    expect(harness.medicKubeCalls()).toHaveLength(1);
  }, 120_000);
});
