import { classifyEvent } from '../../../functions/domain/classify/classify.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse/parse-kube-event.js';
import { er, facts, node, pod, unwrap } from './builders.js';
import { T0, envelope, exportedEvent, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const NODE = 'pool-github-runners-3-ogny9';
const HOUR = 3_600_000;

/** A runner whose pod is Running and Ready on a Ready node: nothing is wrong with it. */
const healthy = (): Facts =>
  facts({
    pods: [
      pod({
        name: NAME,
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 60_000) }],
      }),
    ],
    ephemeralRunners: [er({ name: NAME })],
    nodes: [node({ name: NODE })],
  });

/** Stores an event as the engine does (classify, keep losses and signals), then decides. */
function actionsAfter(raw: unknown, now: number): string[] {
  const c = classifyEvent(unwrap(parseExportedKubeEvent(raw)));
  let f = healthy();
  if (c.kind === 'loss') f = { ...f, losses: [c.loss] };
  if (c.kind === 'node-signal') f = { ...f, nodeSignals: [c.signal] };
  if (c.kind === 'runner-warning') f = { ...f, runnerWarnings: [c.warning] };
  return decide(f, DEFAULT_POLICY, now).actions.map((a) => a.target.kind);
}

const evicted = (component: string) =>
  exportedEvent({
    reason: 'Evicted',
    message: 'The node was low on resource: memory. ',
    component,
    host: NODE,
  });

describe('events are accepted only from the component that emits their reason', () => {
  it.each([
    ['a pod Evicted by someone other than the kubelet or Karpenter', evicted('kubectl')],
    ['a pod Evicted naming no component', { ...evicted(''), source: {}, reportingComponent: '' }],
    [
      'a pod Evicted whose reportingComponent disagrees with source.component',
      { ...evicted('kubelet'), reportingComponent: 'attacker' },
    ],
    [
      "Karpenter's 'Evicted pod:' text from a component that is not Karpenter",
      exportedEvent({ reason: 'Evicted', message: 'Evicted pod: drift', component: 'fake' }),
    ],
    [
      'TaintManagerEviction from the kubelet',
      exportedEvent({
        reason: 'TaintManagerEviction',
        message: 'Marking for deletion Pod arc-runners/x',
        component: 'kubelet',
      }),
    ],
    [
      'a node SpotInterrupted from the kubelet',
      exportedEvent({
        kind: 'Node',
        name: NODE,
        reason: 'SpotInterrupted',
        message: 'Node is spot interrupted',
        component: 'kubelet',
      }),
    ],
    [
      'a node NodeNotReady from a workload',
      exportedEvent({
        kind: 'Node',
        name: NODE,
        reason: 'NodeNotReady',
        message: 'Node is not ready',
        component: 'my-operator',
      }),
    ],
  ])('%s is ignored with a reason and changes nothing', (_name, raw) => {
    const c = classifyEvent(unwrap(parseExportedKubeEvent(raw)));
    expect(c.kind).toBe('ignored');
    if (c.kind === 'ignored') expect(c.reason).toMatch(/not trusted|names no emitting component/);
    expect(actionsAfter(raw, T0 + HOUR)).toEqual([]);
  });

  it.each([
    ['kubelet', 'Evicted'],
    ['karpenter', 'Evicted'],
  ])('still accepts %s %s', (component, reason) => {
    const c = classifyEvent(
      unwrap(parseExportedKubeEvent(exportedEvent({ reason, message: 'x', component }))),
    );
    expect(c.kind).toBe('loss');
  });

  it('accepts a Node SpotInterrupted from Karpenter, and NodeNotReady from the node controller', () => {
    for (const [reason, component] of [
      ['SpotInterrupted', 'karpenter'],
      ['NodeNotReady', 'node-controller'],
    ] as const) {
      const raw = exportedEvent({ kind: 'Node', name: NODE, reason, message: 'm', component });
      expect(classifyEvent(unwrap(parseExportedKubeEvent(raw))).kind).toBe('node-signal');
    }
  });
});

/** A replayed event stripped of every time it carried. */
function untimed(raw: ReturnType<typeof exportedEvent>) {
  return {
    ...raw,
    metadata: { ...raw.metadata, creationTimestamp: null },
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: null,
  };
}

describe('a loss without a time', () => {
  it('is dated by the bus envelope that recorded it, not by the epoch', () => {
    const c = classifyEvent(unwrap(parseExportedKubeEvent(envelope(untimed(evicted('kubelet'))))));
    expect(c.kind).toBe('loss');
    if (c.kind === 'loss') expect(c.loss.at).toBe(T0);
  });

  it('is dated by the CloudWatch Logs record that carried it', async () => {
    const { parseCloudWatchKubeEvents } =
      await import('../../../functions/domain/parse/parse-cloudwatch-logs.js');
    const parsed = unwrap(
      parseCloudWatchKubeEvents({
        messageType: 'DATA_MESSAGE',
        logEvents: [
          { id: '1', timestamp: T0 + 5_000, message: JSON.stringify(untimed(evicted('kubelet'))) },
        ],
      }),
    );
    expect(parsed.events[0]?.at).toBe(T0 + 5_000);
  });

  it('with no recorded time either, never matures into an action on a healthy runner', () => {
    // ARC 0.8.2 (the fixture's labels) frees a slot "at once": before, an untimed rumour was due
    // at epoch + grace, i.e. immediately.
    expect(actionsAfter(untimed(evicted('kubelet')), T0)).toEqual([]);
    expect(actionsAfter(untimed(evicted('kubelet')), T0 + 24 * HOUR)).toEqual([]);
  });
});
