import { runEngine } from '../../../functions/engine/run-engine.js';
import { NS, SET, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

const harness = new EngineHarness();
const wakes: number[] = [];
beforeAll(async () => {
  await harness.start();
  harness.engine.wake = { wakeAt: async (at) => void wakes.push(at) };
});
afterAll(() => harness.stop());

describe('engine wake-ups', () => {
  it('asks to be woken once for a grace period, however often it runs meanwhile, and acts when woken', async () => {
    const name = `${SET}-x7k2p-runner-evct1`;
    seedRunner(
      harness,
      seedRunnerSet(harness),
      name,
      { phase: 'Running', ready: true },
      { withPod: true },
    );
    harness.kube.api.modify(
      'kubelet',
      'pods',
      NS,
      name,
      (p) =>
        void (p.status = {
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node was low on resource: memory. ',
          conditions: [
            {
              type: 'DisruptionTarget',
              status: 'True',
              reason: 'TerminationByKubelet',
              message: 'The node was low on resource: memory. ',
              lastTransitionTime: new Date(harness.clock.now()).toISOString(),
            },
          ],
        }),
      { subresource: 'status' },
    );

    await runEngine({ kind: 'sweep' }, harness.engine);
    await harness.clock.advance(30_000);
    await runEngine({ kind: 'sweep' }, harness.engine);
    await runEngine({ kind: 'wake' }, harness.engine);

    expect(wakes).toHaveLength(1);
    expect(harness.medicKubeCalls()).toEqual([]);

    await harness.clock.advanceTo(wakes[0] ?? 0);
    const woken = await runEngine({ kind: 'wake' }, harness.engine);
    expect(woken.actions.map((a) => [a.kind, a.outcome])).toEqual([
      ['delete-ephemeral-runner', 'succeeded'],
    ]);
  });
});
