import { joinJobs } from '../../../functions/domain/correlate/correlate.js';
import {
  keepCurrentLosses,
  lossesFromObjects,
  placeOnNode,
  rankLosses,
  tookJobBefore,
} from '../../../functions/domain/correlate/runner-losses.js';
import {
  emptyRunnerView,
  type RunnerView,
} from '../../../functions/domain/correlate/runner-view.js';
import {
  gatherViews,
  identify,
  indexViews,
  viewKey,
} from '../../../functions/domain/correlate/runner-views.js';
import type { Loss } from '../../../functions/domain/model/loss.js';
import { er, facts, job, node, pod } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const S = 1000;
const view = (o: Partial<RunnerView> = {}): RunnerView => ({
  ...emptyRunnerView(CLUSTER, NS, NAME),
  ...o,
});
const loss = (o: Partial<Loss> = {}): Loss => ({
  cluster: CLUSTER,
  namespace: NS,
  runnerName: NAME,
  podUid: null,
  nodeName: null,
  scaleSet: SCALE_SET,
  ownedByArc: true,
  cause: { kind: 'preemption' },
  signal: { source: 'pod-event', detail: 'Preempted' },
  at: T0,
  ...o,
});
const erJob = {
  jobRepositoryName: 'acme/app',
  workflowRunId: 9_000_000_001,
  jobDisplayName: 'build',
};
const cache = {
  cluster: CLUSTER,
  namespace: NS,
  runnerName: NAME,
  scaleSet: 'from-cache',
  runnerId: 77,
  job: { jobId: null, jobRequestId: 7, jobWorkflowRef: null, ...erJob },
  seenAt: T0 - 60 * S,
};

describe('correlate, step 1: gatherViews', () => {
  it('one view per runner named anywhere, with its objects, stored losses and warnings', () => {
    const { views, cached } = gatherViews(
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        erJobCache: [{ ...cache, runnerName: 'cached-only' }],
        losses: [loss({ runnerName: 'lost-only' })],
        runnerWarnings: [
          {
            ...loss(),
            kind: 'spot-interruption-warning',
            signal: { source: 'pod-event', detail: 'w' },
          },
        ],
        missingPods: [
          { cluster: CLUSTER, namespace: NS, name: NAME, since: T0 },
          { cluster: CLUSTER, namespace: NS, name: 'never-seen', since: T0 },
        ],
      }),
    );
    expect([...views.keys()].sort()).toEqual(
      [NAME, 'cached-only', 'lost-only'].map((n) => viewKey(CLUSTER, NS, n)).sort(),
    );
    const v = views.get(viewKey(CLUSTER, NS, NAME));
    expect(v?.pod?.metadata.name).toBe(NAME);
    expect(v?.er?.metadata.name).toBe(NAME);
    expect(v?.warnings).toHaveLength(1);
    expect(v?.podMissingSince).toBe(T0);
    expect(views.get(viewKey(CLUSTER, NS, 'lost-only'))?.losses).toHaveLength(1);
    expect(cached.get(viewKey(CLUSTER, NS, 'cached-only'))?.runnerId).toBe(77);
  });
});

describe('correlate, step 2: identify', () => {
  it('an ARC runner by its objects: scale set, generation, job fields and runner id', () => {
    const v = view({ pod: pod(), er: er({ job: erJob }) });
    identify(v, undefined);
    expect(v).toMatchObject({ scaleSet: SCALE_SET, arcOwned: true, legacyArc: true, runnerId: 42 });
    expect(v.jobFields?.workflowRunId).toBe(9_000_000_001);
    expect(v.jobSeenAt).toBeNull();
  });

  it('a runner known from the cache only takes its scale set, job and runner id from it', () => {
    const v = view();
    identify(v, cache);
    expect(v).toMatchObject({
      scaleSet: 'from-cache',
      arcOwned: true,
      runnerId: 77,
      jobSeenAt: cache.seenAt,
    });
    expect(v.jobFields?.jobDisplayName).toBe('build');
  });

  it('ARC ≥ 0.12 by version, and a loss that says not ARC outweighs the rest', () => {
    const modern = view({ pod: pod({ version: '0.13.1' }) });
    identify(modern, undefined);
    expect(modern.legacyArc).toBe(false);
    const contradicted = view({ er: er(), losses: [loss({ ownedByArc: false })] });
    identify(contradicted, undefined);
    expect(contradicted.arcOwned).toBe(false);
    const nothing = view({ losses: [loss({ ownedByArc: null, scaleSet: 'from-loss' })] });
    identify(nothing, undefined);
    expect(nothing).toMatchObject({ arcOwned: false, scaleSet: 'from-loss' });
  });
});

describe('correlate, steps 3 and 4: indexViews and joinJobs', () => {
  it('indexes by name, runner id and ER run, and joins each job to its one runner', () => {
    const a = view({
      runnerId: 42,
      jobFields: { jobId: null, jobRequestId: null, jobWorkflowRef: null, ...erJob },
    });
    const b = view({ name: 'other-runner' });
    const index = indexViews([a, b]);
    expect([...index.byName.keys()]).toEqual([NAME, 'other-runner']);
    expect(index.byRunnerId.get(42)).toEqual([a]);
    expect(index.byErRun.get('acme/app#9000000001')).toEqual([a]);
    const mine = job({ jobId: 1 });
    const stranger = job({ jobId: 2, runnerId: 99, runnerName: 'nobody', runId: 5 });
    const byRun = joinJobs([mine, stranger], index);
    expect(a.jobs).toEqual([mine]);
    expect(b.jobs).toEqual([]);
    expect([...byRun.keys()]).toEqual(['acme/app#9000000001', 'acme/app#5']);
  });
});

describe('correlate, step 5: keepCurrentLosses', () => {
  const readyPod = pod({
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 + 60 * S) }],
  });
  const newPod = {
    ...readyPod,
    metadata: { ...readyPod.metadata, creationTimestamp: T0 + 30 * S },
  };

  it('keeps every stored loss of a runner whose pod was not read', () => {
    const losses = [loss()];
    expect(keepCurrentLosses(view({ losses }), [])).toBe(losses);
  });

  it('drops a loss of an older pod of the same name, by uid or by time', () => {
    const older = [loss({ podUid: 'uid-old' }), loss({ podUid: null, at: T0 })];
    expect(keepCurrentLosses(view({ pod: newPod, losses: older }), [node()])).toEqual([]);
  });

  it('keeps it when the runner had taken a job (spent JIT config), or ARC ≤ 0.11 re-created an idle one', () => {
    const older = [loss({ podUid: 'uid-old' })];
    const took = view({ pod: newPod, losses: older, jobSeenAt: T0 - S });
    expect(keepCurrentLosses(took, [node()])).toEqual(older);
    const legacyIdle = view({ pod: newPod, losses: older, legacyArc: true, busy: false });
    expect(keepCurrentLosses(legacyIdle, [node()])).toEqual(older);
  });

  it('a Running and Ready pod outranks an event about it, unless its node is down', () => {
    const samePod = [loss({ podUid: readyPod.metadata.uid })];
    expect(keepCurrentLosses(view({ pod: readyPod, losses: samePod }), [node()])).toEqual([]);
    expect(
      keepCurrentLosses(view({ pod: readyPod, losses: samePod }), [node({ ready: 'Unknown' })]),
    ).toEqual(samePod);
    expect(
      keepCurrentLosses(view({ pod: readyPod, losses: samePod }), [
        node({ deletionTimestamp: iso(T0) }),
      ]),
    ).toEqual(samePod);
  });
});

describe('correlate, step 6: lossesFromObjects', () => {
  it('the pod and EphemeralRunner state, in that order', () => {
    const failedPod = pod({
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node had condition: [DiskPressure]. ',
    });
    const found = lossesFromObjects(
      view({ pod: failedPod, er: er({ phase: 'Failed', reason: 'InvalidPod' }) }),
      new Map(),
      T0,
    );
    expect(found.map((l) => l.cause.kind)).toEqual(['admission-reject', 'runner-failed']);
  });

  it('a missing pod of a live EphemeralRunner, under the scale set correlate knows', () => {
    const [missing] = lossesFromObjects(
      view({ er: er(), podMissingSince: T0, scaleSet: 'known' }),
      new Map(),
      T0,
    );
    expect(missing).toMatchObject({ cause: { kind: 'pod-not-found' }, scaleSet: 'known', at: T0 });
  });

  it("an idle runner whose own registration stayed offline, never another runner's of the same name", () => {
    const running = pod({ phase: 'Running' });
    const p = { ...running, metadata: { ...running.metadata, creationTimestamp: T0 } };
    const registration = {
      id: 42,
      name: NAME,
      status: 'offline',
      busy: false,
      labels: [SCALE_SET],
      owner: { org: 'acme' },
      installationId: 77,
      offlineSince: T0,
    };
    const now = T0 + 300 * S;
    const idle = view({ pod: p, er: er() });
    expect(
      lossesFromObjects(idle, new Map([[42, registration]]), now).map((l) => l.cause.kind),
    ).toEqual(['pod-not-found']);
    const namesake = new Map([[42, { ...registration, name: 'someone-else' }]]);
    expect(lossesFromObjects(idle, namesake, now)).toEqual([]);
    expect(lossesFromObjects({ ...idle, busy: true }, new Map([[42, registration]]), now)).toEqual(
      [],
    );
  });

  it('nothing for a live runner', () => {
    expect(lossesFromObjects(view({ pod: pod(), er: er() }), new Map(), T0)).toEqual([]);
  });
});

describe('correlate, steps 7 and 8: placeOnNode and rankLosses', () => {
  it('a live pod on a NotReady node is lost with it; the signal dates the loss', () => {
    const v = view({ pod: pod(), scaleSet: SCALE_SET });
    placeOnNode(v, facts({ nodes: [node({ ready: 'Unknown' })] }), T0 + 60 * S);
    expect(v.node?.name).toBe('pool-github-runners-3-ogny9');
    expect(v.losses.map((l) => [l.cause.kind, l.at, l.ownedByArc])).toEqual([
      ['node-not-ready', T0, true],
    ]);
  });

  it('a node being deleted means pod-gc; a finished pod gets no node loss; old warnings drop', () => {
    const gone = view({ pod: pod() });
    placeOnNode(gone, facts({ nodes: [node({ deletionTimestamp: iso(T0) })] }), T0);
    expect(gone.losses.map((l) => l.cause.kind)).toEqual(['pod-gc']);
    const warning = { ...loss(), kind: 'nth-drain' as const, at: T0 - 3600 * S };
    const done = view({ pod: pod({ phase: 'Succeeded' }), warnings: [warning] });
    placeOnNode(done, facts({ nodes: [node({ ready: 'Unknown' })] }), T0);
    expect(done.losses).toEqual([]);
    expect(done.warnings).toEqual([]);
  });

  it('a runner without a pod takes its node from a loss', () => {
    const v = view({ losses: [loss({ nodeName: 'pool-github-runners-3-ogny9' })] });
    placeOnNode(v, facts({ nodes: [node()] }), T0);
    expect(v.nodeName).toBe('pool-github-runners-3-ogny9');
  });

  it('ranks the most telling loss first, dates the runner from its earliest, and says ARC will not recover', () => {
    const v = view({
      losses: [
        loss({ cause: { kind: 'pod-not-found' }, at: T0 - 10 * S }),
        loss({
          cause: { kind: 'node-pressure-eviction', resource: 'memory', container: null },
          at: T0,
        }),
      ],
      jobSeenAt: T0 - 20 * S,
    });
    rankLosses(v);
    expect(v.loss?.cause.kind).toBe('node-pressure-eviction');
    expect(v.lostAt).toBe(T0 - 10 * S);
    expect(v.arcWontRecover).toBe(true);
    const fresh = view({ losses: [loss({ at: null })] });
    rankLosses(fresh);
    expect([fresh.lostAt, fresh.arcWontRecover]).toEqual([null, false]);
    const none = view();
    rankLosses(none);
    expect([none.loss, none.lostAt]).toEqual([null, null]);
  });

  it('tookJobBefore: a completed job of its own, or job fields seen before the loss', () => {
    const done = view({ jobs: [job({ status: 'completed' })] });
    expect(tookJobBefore(done)(loss({ at: null }))).toBe(true);
    const started = view({ jobs: [job({ status: 'completed', startedAt: iso(T0) })] });
    expect(tookJobBefore(started)(loss({ at: T0 + S }))).toBe(true);
    // Lost before its job started: the re-created pod took the job, nothing was spent.
    expect(tookJobBefore(started)(loss({ at: T0 - S }))).toBe(false);
    const seen = view({ jobSeenAt: T0 });
    expect(tookJobBefore(seen)(loss({ at: T0 }))).toBe(true);
    expect(tookJobBefore(seen)(loss({ at: T0 - S }))).toBe(false);
    expect(tookJobBefore(seen)(loss({ at: null }))).toBe(false);
  });
});
