import { classifyMissingPod } from '../../../functions/domain/classify/classify-pod.js';
import { runnerLoss } from '../../../functions/domain/classify/runner-loss.js';
import { er, pod } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0 } from './fixtures.js';

const facts = {
  cluster: CLUSTER,
  namespace: NS,
  runnerName: 'arc-runner-set-2fh9q-runner-tkvlz',
  scaleSet: SCALE_SET,
  cause: { kind: 'pod-gc' as const },
  signal: { source: 'node-status' as const, detail: 'node gone' },
  at: T0,
};
const arcPod = pod().metadata;
const lookAlikePod = pod({ ownerReferences: [] }).metadata;
const arcEr = er().metadata;
const foreignEr = er({ ownerKind: 'Deployment' }).metadata;

describe('runnerLoss: the one Loss constructor and its one "owned by ARC" test', () => {
  it.each<[string, Parameters<typeof runnerLoss>[1], boolean | null]>([
    ['no object read (an event without the lookup)', {}, null],
    ['both objects explicitly absent', { pod: null, er: null }, null],
    ['an ARC runner pod', { pod: arcPod }, true],
    ['a pod without its EphemeralRunner owner', { pod: lookAlikePod }, false],
    ['an EphemeralRunner owned by an EphemeralRunnerSet', { er: arcEr }, true],
    ['an EphemeralRunner owned by something else', { er: foreignEr }, false],
    ['an ARC pod and an ARC EphemeralRunner', { pod: arcPod, er: arcEr }, true],
    ['an ARC pod with a foreign EphemeralRunner', { pod: arcPod, er: foreignEr }, false],
    ['a look-alike pod with an ARC EphemeralRunner', { pod: lookAlikePod, er: arcEr }, false],
  ])('%s → ownedByArc %s', (_, evidence, owned) => {
    expect(runnerLoss(facts, evidence).ownedByArc).toBe(owned);
  });

  it('copies the facts and fills an absent pod uid and node with null', () => {
    expect(runnerLoss(facts, {})).toEqual({
      ...facts,
      podUid: null,
      nodeName: null,
      ownedByArc: null,
    });
    expect(runnerLoss({ ...facts, podUid: 'p1', nodeName: 'n1' }, {})).toMatchObject({
      podUid: 'p1',
      nodeName: 'n1',
    });
  });
});

describe('classifyMissingPod', () => {
  it('a pod looked up and missing: pod-not-found since then, from the listing, owned as its ER is', () => {
    const loss = classifyMissingPod(er(), T0, 'from-cache');
    expect(loss).toMatchObject({
      cluster: CLUSTER,
      namespace: NS,
      podUid: null,
      nodeName: null,
      scaleSet: 'from-cache',
      ownedByArc: true,
      cause: { kind: 'pod-not-found' },
      at: T0,
    });
    expect(loss.signal).toEqual({
      source: 'listing',
      detail: `pod ${loss.runnerName} not found since 2026-12-02T10:00:00.000Z`,
    });
    expect(classifyMissingPod(er({ ownerKind: 'Deployment' }), T0, null).ownedByArc).toBe(false);
  });
});
