import { runEngine } from '../../../functions/engine/run-engine.js';
import { CLUSTER, EngineHarness } from './engine-harness.js';

const NS = 'arc-runners';
const SET = 'arc-linux';
const harness = new EngineHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

function seedRunnerSet() {
  return harness.kube.api.create('arc', 'ephemeralrunnersets', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunnerSet',
    metadata: { name: `${SET}-x7k2p`, namespace: NS, labels: arcLabels('runner-set') },
    spec: {
      replicas: 1,
      patchID: 0,
      ephemeralRunnerSpec: {
        githubConfigUrl: 'https://github.com/acme',
        githubConfigSecret: 's',
        runnerScaleSetId: 1,
        spec: { containers: [{ name: 'runner', image: 'runner' }] },
      },
    },
  });
}

function arcLabels(component: string) {
  return {
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    'app.kubernetes.io/version': '0.13.0',
    'actions.github.com/scale-set-name': SET,
    'actions.github.com/scale-set-namespace': NS,
  };
}

function seedFailedRunner(name: string, owner: { metadata: Record<string, unknown> }) {
  harness.kube.api.create('arc', 'ephemeralrunners', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: {
      name,
      namespace: NS,
      labels: arcLabels('runner'),
      ownerReferences: [
        {
          apiVersion: 'actions.github.com/v1alpha1',
          kind: 'EphemeralRunnerSet',
          name: String(owner.metadata.name),
          uid: String(owner.metadata.uid),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      githubConfigUrl: 'https://github.com/acme',
      githubConfigSecret: 's',
      runnerScaleSetId: 1,
      spec: { containers: [{ name: 'runner', image: 'runner' }] },
    },
  });
  harness.kube.api.modify(
    'arc',
    'ephemeralrunners',
    NS,
    name,
    (er) =>
      void (er.status = {
        phase: 'Failed',
        reason: 'InvalidPod',
        message: 'Failed to create the pod: admission webhook denied',
        ready: false,
      }),
    { subresource: 'status' },
  );
}

describe('engine, rule 1: a poisoned slot is freed through the real clients', () => {
  it('deletes an EphemeralRunner that ARC marked Failed (InvalidPod) once, by uid, and then leaves it be', async () => {
    harness.usePolicy({ allow: { namespaces: [NS] } });
    const set = seedRunnerSet();
    seedFailedRunner(`${SET}-x7k2p-runner-q9z4w`, set);

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
