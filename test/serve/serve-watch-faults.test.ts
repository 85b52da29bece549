/**
 * serve's informers (functions/serve/cluster-observer.ts) under watch faults, over the real
 * client-node ListWatch on real sockets against the Kubernetes API twin, on the simulated clock
 * (the informers' retries wait on serve's timers, here the twin's SimClock):
 * - every watch cut mid-stream (the socket destroyed, as an API server restart or a load
 *   balancer's idle cut does), changes made while nobody watches, then the retry: each watch
 *   resumes from its resourceVersion, with no list, and every change arrives once;
 * - the same, with the history compacted past the cursors before the retry (etcd compaction):
 *   each watch is answered 410 Gone, relists once, and every change still arrives once, the
 *   deleted pod included.
 * An observation is what serve decides on; one that arrives twice, or not at all, fails here.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeEvent } from '../../functions/domain/model/cluster-facts.js';
import { ClusterObserver, type Observation } from '../../functions/serve/cluster-observer.js';
import { kubeRequester } from '../../functions/serve/kube-http.js';
import type { SimClock } from '../../sim/clock.js';
import type { ApiServer } from '../../sim/kube/api/api-server.js';
import {
  kubeConfigFor,
  NS,
  seedEphemeralRunner,
  seedRunnerPod,
  startSim,
} from '../integration/kube-gateway/sim-fixture.js';
import { simTimers } from './serve-twin-fixture.js';

const NODE_EVENTS_NS = 'other';
/** The store keys of the collections serve's informers watch, and how many watches each. */
const WATCHED: [string, number][] = [
  ['pods', 1],
  ['ephemeralrunners.actions.github.com', 1],
  ['nodes', 1],
  ['events', 2],
];
/** How many times a wait looks at its condition, 10 ms apart, before it fails. */
const LOOKS = 1000;

let server: ApiServer;
let clock: SimClock;
let kubeconfig: KubeConfig;
let observer: ClusterObserver;
let seen: string[];

beforeEach(async () => {
  ({ server, clock } = await startSim());
  kubeconfig = kubeConfigFor(server);
  for (const name of ['node-a', 'node-b'])
    server.api.create('admin', 'nodes', undefined, { metadata: { name } });
  for (const name of ['runner-a', 'runner-b', 'runner-c']) {
    const er = seedEphemeralRunner(server, name);
    seedRunnerPod(server, name, { owner: er, nodeName: 'node-a' });
  }
  seen = [];
  observer = new ClusterObserver({
    kubeconfig,
    request: kubeRequester(kubeconfig),
    cluster: 'sim',
    runnerNamespaces: [NS],
    nodeEventsNamespace: NODE_EVENTS_NS,
    clock,
    timers: simTimers(clock),
    onObservation: (o) => seen.push(...describe(o)),
  });
  await observer.start();
  await until('the informers sync', () => observer.synced());
});

afterEach(async () => {
  await observer.stop();
  await server.stop();
});

/** One line per fact an observation carries. */
function describe(o: Observation): string[] {
  if (o.kind === 'events')
    return o.events.map((e: KubeEvent) => `event ${e.reason} ${e.involvedObject.name}`);
  return [
    ...o.losses.map((l) => `loss ${l.runnerName} ${l.cause.kind}`),
    ...o.signals.map((s) => `signal ${s.nodeName ?? '?'} ${s.kind}`),
  ];
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let look = 0; look < LOOKS; look++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${what}: not after ${LOOKS} looks; ${JSON.stringify(observer.status())}`);
}

/** Cuts every watch's stream once: each informer's watch ends in an error and waits to retry. */
async function cutEveryWatch(): Promise<void> {
  const cuts = new Map(WATCHED);
  server.store.watchFault = (resource) => {
    const left = cuts.get(resource) ?? 0;
    cuts.set(resource, left - 1);
    return left > 0 ? 'cut' : undefined;
  };
  // The open streams end, the informers reconnect at once, and the reconnection is cut.
  server.closeWatches();
  await until('every informer failed', () => observer.status().every((i) => i.error !== null));
  server.store.watchFault = undefined;
}

/** Changes made while nobody watches, each of which serve must observe once. */
function changeWhileDown(): string[] {
  server.api.modify(
    'arc',
    'ephemeralrunners',
    NS,
    'runner-a',
    (o) => void (o.status = { phase: 'Failed', reason: 'InvalidPod', message: 'spent config' }),
    { subresource: 'status' },
  );
  server.api.modify(
    'kubelet',
    'pods',
    NS,
    'runner-b',
    (p) =>
      void (p.status = {
        phase: 'Failed',
        reason: 'Evicted',
        message:
          'The node was low on resource: memory. Threshold quantity: 100Mi, available: 40Mi. ' +
          'Container runner was using 3Gi, request is 0, has larger consumption of request.',
      }),
    { subresource: 'status' },
  );
  server.api.delete('admin', 'pods', NS, 'runner-c', { gracePeriodSeconds: 0 });
  server.api.modify('karpenter', 'nodes', undefined, 'node-b', (n) => {
    (n as { spec?: object }).spec = {
      taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
    };
  });
  server.api.create('node-controller', 'events', NODE_EVENTS_NS, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'node-a.notready', namespace: NODE_EVENTS_NS },
    involvedObject: { kind: 'Node', name: 'node-a', apiVersion: 'v1' },
    reason: 'NodeNotReady',
    message: 'Node node-a status is now: NodeNotReady',
    type: 'Normal',
    source: { component: 'node-controller' },
    firstTimestamp: new Date(clock.now()).toISOString(),
    lastTimestamp: new Date(clock.now()).toISOString(),
    count: 1,
  });
  return [
    'event NodeNotReady node-a',
    'loss runner-a runner-failed',
    'loss runner-b node-pressure-eviction',
    'signal node-b karpenter-disruption',
  ];
}

/** runner-medic's list and watch requests since `from`, as `verb path` (no query). */
function requestsSince(from: number): string[] {
  return server.audit.requests
    .slice(from)
    .filter((r) => r.by === 'runner-medic')
    .map((r) => `${r.verb} ${r.path.split('?')[0] ?? ''}`);
}

const lists = (requests: string[]) => requests.filter((r) => r.startsWith('list ')).sort();

test('a watch cut mid-stream resumes from its resourceVersion: the changes made while it was down arrive once, with no list', async () => {
  expect(seen).toEqual([]);
  await cutEveryWatch();
  expect(observer.synced()).toBe(false);
  const from = server.audit.requests.length;

  const expected = changeWhileDown();
  // Nobody watches: nothing arrives until the retry, a backoff of 1 s on serve's clock.
  await new Promise((resolve) => setImmediate(resolve));
  expect(seen).toEqual([]);
  await clock.advance(999);
  expect(requestsSince(from)).toEqual([]);
  await clock.advance(1);

  await until('every change arrives', () => seen.length >= expected.length);
  await until('the informers are answered again', () => observer.synced());
  const requests = requestsSince(from);
  expect(lists(requests)).toEqual([]);
  expect(requests.filter((r) => r.startsWith('watch ')).length).toBe(observer.status().length);
  expect(await observer.caughtUp()).toBe(true);
  expect([...seen].sort()).toEqual(expected);

  // Later watches and retries bring nothing again.
  await clock.advance(60_000);
  expect(await observer.caughtUp()).toBe(true);
  expect([...seen].sort()).toEqual(expected);
}, 60_000);

test('a cursor too old for the history (410 Gone) relists once: the changes arrive once, the deleted pod included', async () => {
  await cutEveryWatch();
  const from = server.audit.requests.length;
  const expected = changeWhileDown();
  // etcd compacted past every cursor: the watch cache answers the resumed watches 410 Expired.
  server.store.compact();
  const compacted = server.store.oldestResumableRv();
  await clock.advance(1000);

  await until('every change arrives', () => seen.length >= expected.length);
  await until('every informer relisted', () =>
    observer.status().every((i) => Number(i.resourceVersion) >= compacted),
  );
  await until('the informers are answered again', () => observer.synced());
  const requests = requestsSince(from);
  // One list per informer, each after its watch was answered 410.
  expect(lists(requests)).toEqual(
    observer
      .status()
      .map((i) => `list ${i.path}`)
      .sort(),
  );
  expect(await observer.caughtUp()).toBe(true);
  expect([...seen].sort()).toEqual(expected);

  await clock.advance(60_000);
  expect(await observer.caughtUp()).toBe(true);
  expect([...seen].sort()).toEqual(expected);
}, 60_000);
