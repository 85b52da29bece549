import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { CLUSTER, EngineHarness } from './engine-harness.js';

const harness = new EngineHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

describe('engine, rule 1: a poisoned slot is freed through the real clients', () => {
  it('deletes an EphemeralRunner that ARC marked Failed (InvalidPod) once, by uid, and then leaves it be', async () => {
    harness.usePolicy({ allow: { namespaces: [NS] } });
    const set = seedRunnerSet(harness);
    seedRunner(harness, set, `${SET}-x7k2p-runner-q9z4w`, {
      phase: 'Failed',
      reason: 'InvalidPod',
      message: 'Failed to create the pod: admission webhook denied',
      ready: false,
    });

    const first = await runEngine({ kind: 'sweep' }, harness.engine);
    await harness.clock.advance(60_000);
    const second = await runEngine({ kind: 'sweep' }, harness.engine);

    expect(first.actions.map((a) => [a.kind, a.outcome])).toEqual([
      ['delete-ephemeral-runner', 'succeeded'],
    ]);
    expect(second.actions.filter((a) => a.outcome !== 'skipped')).toEqual([]);
    expect(harness.medicKubeCalls().map((c) => [c.verb, c.resource, c.name, c.code])).toEqual([
      ['delete', 'ephemeralrunners.actions.github.com', `${SET}-x7k2p-runner-q9z4w`, 200],
    ]);
    expect(harness.metrics.filter((m) => m.name === 'Remediation')).toEqual([
      {
        name: 'Remediation',
        dimensions: {
          rule: 'rule-1-free-poisoned-slot',
          cause: 'runner-failed',
          outcome: 'succeeded',
        },
        value: 1,
      },
    ]);
    expect(harness.remediationEvents()).toEqual([
      expect.objectContaining({
        action: 'delete-ephemeral-runner',
        cluster: CLUSTER,
        namespace: NS,
        runner: `${SET}-x7k2p-runner-q9z4w`,
        outcome: 'succeeded',
        dryRun: false,
      }),
    ]);
  });
});
