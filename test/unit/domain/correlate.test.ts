import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import {
  correlate,
  runnerOfJob,
  runnersForJob,
  runnersOnInstance,
} from '../../../functions/domain/correlate/correlate.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { RUN_ID, er, facts, job, node, pod, withEvent } from './builders.js';
import { CLUSTER, NS, T0, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const only = (f: Facts) => {
  const [v, ...rest] = correlate(f, T0).runners;
  expect(rest).toEqual([]);
  if (!v) throw new Error('expected one runner');
  return v;
};

describe('correlate', () => {
  it('joins pod, EphemeralRunner and node by name, and the node by spec.nodeName', () => {
    const v = only(
      facts({ pods: [pod()], ephemeralRunners: [er()], nodes: [node(), node({ name: 'other' })] }),
    );
    expect(v).toMatchObject({
      cluster: CLUSTER,
      namespace: NS,
      name: NAME,
      scaleSet: 'arc-runner-set',
      arcOwned: true,
      busy: false,
      loss: null,
    });
    expect(v.node?.name).toBe('pool-github-runners-3-ogny9');
  });

  it.each<[string, Facts, number[]]>([
    [
      'by GitHub runner id (the ER status.runnerId)',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        jobs: [job({ jobId: 1 }), job({ jobId: 2, runnerName: 'someone-else', runnerId: 43 })],
      }),
      [1],
    ],
    [
      'by runner name when only one proven ARC runner has it and its runner id is unknown',
      facts({
        pods: [pod()],
        ephemeralRunners: [{ ...er(), runnerId: null }],
        jobs: [job({ jobId: 1 }), job({ jobId: 2, runnerName: 'someone-else' })],
      }),
      [1],
    ],
    [
      'by ER job fields (repo + run id + display name) when the job never named its runner',
      facts({
        ephemeralRunners: [
          er({
            job: {
              jobId: 'guid-not-the-rest-id',
              jobRepositoryName: 'acme/app',
              workflowRunId: RUN_ID,
              jobDisplayName: 'build',
            },
          }),
        ],
        jobs: [
          // GitHub names no runner id either until a runner takes the job.
          job({ jobId: 3, runnerName: null, runnerId: null, status: 'in_progress' }),
          job({ jobId: 4, runnerName: null, runnerId: null, name: 'lint' }),
          job({ jobId: 5, runnerName: null, runnerId: null, runId: 1 }),
        ],
      }),
      [3],
    ],
  ])('matches jobs %s', (_, f, ids) => {
    const v = only(f);
    expect(v.jobs.map((j) => j.job.jobId)).toEqual(ids);
    expect(v.busy).toBe(true);
  });

  it('finds the runners of a queued job through its scale-set label (case-insensitive)', () => {
    const c = correlate(facts({ pods: [pod()], ephemeralRunners: [er()] }), T0);
    const queued = job({ status: 'queued', runnerName: null, labels: ['ARC-Runner-Set'] });
    expect(runnersForJob(c, queued).map((v) => v.name)).toEqual([NAME]);
    expect(
      runnersForJob(c, { ...queued, job: { ...queued.job, labels: ['ubuntu-latest'] } }),
    ).toEqual([]);
  });

  it('finds the runners on an EC2 instance through providerID', () => {
    const c = correlate(facts({ pods: [pod()], nodes: [node()] }), T0);
    expect(runnersOnInstance(c, 'i-0123456789abcdef0').map((v) => v.name)).toEqual([NAME]);
    expect(runnersOnInstance(c, 'i-0fff')).toEqual([]);
  });

  it('picks the most telling loss and the earliest time, attributing the eviction to the node warning', () => {
    const evictedByApi = pod({
      conditions: [
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'EvictionByEvictionAPI',
          lastTransitionTime: iso(T0 + 5000),
        },
      ],
    });
    const f = withEvent(
      facts({ pods: [evictedByApi], ephemeralRunners: [er()], nodes: [node()] }),
      {
        reason: 'SpotInterruption',
        message: 'Spot ITN received',
        component: 'aws-node-termination-handler',
        kind: 'Node',
        name: 'pool-github-runners-3-ogny9',
        at: T0,
      },
    );
    const v = only(f);
    expect(v.loss?.cause).toEqual({
      kind: 'api-eviction',
      by: 'spot-interruption',
      karpenterReason: null,
    });
    expect(v.loss?.signal.detail).toMatch(/EvictionByEvictionAPI.*SpotInterruption/);
    expect(v.lostAt).toBe(T0 + 5000);
  });

  it('turns a NotReady node into a loss for the live runner pods on it, not for finished ones', () => {
    const f = facts({
      pods: [pod()],
      ephemeralRunners: [er()],
      nodes: [node({ ready: 'Unknown' })],
    });
    expect(only(f).loss?.cause).toEqual({ kind: 'node-not-ready' });
    const done = facts({
      pods: [pod({ phase: 'Succeeded' })],
      nodes: [node({ ready: 'Unknown' })],
    });
    expect(only(done).loss).toBeNull();
  });

  it.each<[string, Facts, boolean]>([
    ['pod and ER with ARC metadata', facts({ pods: [pod()], ephemeralRunners: [er()] }), true],
    ['an ER alone', facts({ ephemeralRunners: [er()] }), true],
    ['a pod without the runner label', facts({ pods: [pod({ labels: { app: 'web' } })] }), false],
    [
      'an ARC-looking ER beside a non-runner pod of the same name',
      facts({ pods: [pod({ labels: { app: 'web' } })], ephemeralRunners: [er()] }),
      false,
    ],
    [
      'only an event without labels (exporter lookup off)',
      facts({
        losses: [
          {
            cluster: CLUSTER,
            namespace: NS,
            runnerName: NAME,
            podUid: null,
            nodeName: null,
            scaleSet: null,
            ownedByArc: null,
            cause: { kind: 'preemption' },
            signal: { source: 'pod-event', detail: 'Preempted' },
            at: T0,
          },
        ],
      }),
      false,
    ],
  ])('runner guard: %s → %s', (_, f, owned) => {
    expect(only(f).arcOwned).toBe(owned);
  });

  it('runnerOfJob never uses the ER jobId as the REST job id', () => {
    const f = facts({
      ephemeralRunners: [
        er({
          job: {
            jobId: '123',
            jobRepositoryName: 'acme/app',
            workflowRunId: 1,
            jobDisplayName: 'x',
          },
        }),
      ],
      jobs: [job({ jobId: 123, runnerName: null, runnerId: null, runId: 2, name: 'y' })],
    });
    const c = correlate(f, T0);
    const j = f.jobs[0];
    if (!j) throw new Error('expected a job');
    expect(runnerOfJob(c, j)).toBeNull();
  });
});

describe('runners ARC re-created or that never connect', () => {
  const cached = (seenAt: number): Facts['erJobCache'][number] => ({
    cluster: CLUSTER,
    namespace: NS,
    runnerName: NAME,
    scaleSet: 'arc-runner-set',
    runnerId: 42,
    job: {
      jobId: 'g',
      jobRequestId: 1,
      jobRepositoryName: 'acme/app',
      jobWorkflowRef: null,
      workflowRunId: RUN_ID,
      jobDisplayName: 'build',
    },
    seenAt,
  });
  // rawPod is created at T0 - 60 s.
  const missing = (since: number) => [{ cluster: CLUSTER, namespace: NS, name: NAME, since }];
  it.each<[string, Facts, string | null]>([
    [
      'actions-runner-controller#4588: job cached, pod missing, then re-created with no failure',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        erJobCache: [cached(T0 - 300_000)],
        missingPods: missing(T0 - 90_000),
      }),
      'pod-not-found',
    ],
    [
      'ARC retried a Failed pod (failure recorded)',
      facts({
        pods: [pod()],
        ephemeralRunners: [er({ failures: { old: iso(T0 - 80_000) } })],
        erJobCache: [cached(T0 - 300_000)],
        missingPods: missing(T0 - 90_000),
      }),
      null,
    ],
    [
      'the job was first seen after the pod went missing',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        erJobCache: [cached(T0 - 30_000)],
        missingPods: missing(T0 - 90_000),
      }),
      null,
    ],
    [
      'no job: the re-created pod may well work',
      facts({ pods: [pod()], ephemeralRunners: [er()], missingPods: missing(T0 - 90_000) }),
      null,
    ],
    [
      'the pod was created before it was seen missing (stale record)',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        erJobCache: [cached(T0 - 300_000)],
        missingPods: missing(T0 - 30_000),
      }),
      null,
    ],
  ])('%s → %s', (_, f, kind) => {
    const v = only(f);
    expect(v.loss?.cause.kind ?? null).toBe(kind);
    if (kind) expect(v.loss?.signal.detail).toMatch(/actions-runner-controller#4588/);
  });

  const registration = (status: string, offlineSince: number | null) => ({
    id: 42,
    name: NAME,
    status,
    busy: false,
    labels: ['arc-runner-set'],
    owner: { org: 'acme' },
    installationId: 77,
    offlineSince,
  });
  it.each<[string, ReturnType<typeof registration>, number, number | null]>([
    ['online', registration('online', null), T0 + 600_000, null],
    [
      'offline for two minutes after the pod started: lost from then',
      registration('offline', T0 - 120_000),
      T0 + 60_000,
      T0 + 60_000,
    ],
    [
      'offline, but the pod started under two minutes ago',
      registration('offline', T0 - 120_000),
      T0 + 59_000,
      null,
    ],
    [
      'offline but busy',
      { ...registration('offline', T0 - 120_000), busy: true },
      T0 + 600_000,
      null,
    ],
  ])('an idle Running pod whose registration is %s', (_, r, now, lostAt) => {
    const [v] = correlate(
      facts({ pods: [pod()], ephemeralRunners: [er()], registrations: [r] }),
      now,
    ).runners;
    expect(v?.lostAt ?? null).toBe(lostAt);
    if (lostAt !== null) expect(v?.loss?.signal.detail).toMatch(/offline since/);
  });

  it('judges a runner only by its own registration (runner id), never by a namesake', () => {
    const offline = registration('offline', T0 - 120_000);
    const judged = (registrations: ReturnType<typeof registration>[]) =>
      correlate(facts({ pods: [pod()], ephemeralRunners: [er()], registrations }), T0 + 600_000)
        .runners[0]?.loss?.signal.detail ?? null;
    // Another org's offline runner of the same name, with its own id, says nothing of ours.
    expect(judged([{ ...offline, id: 4242, owner: { org: 'other' } }])).toBeNull();
    expect(judged([{ ...offline, id: 4242 }, registration('online', null)])).toBeNull();
    expect(judged([registration('online', null), { ...offline, id: 4242 }])).toBeNull();
    expect(judged([offline])).toMatch(/GitHub runner 42 offline since/);
  });

  it('never judges a runner with a job on its registration status', () => {
    const f = facts({
      pods: [pod()],
      ephemeralRunners: [
        er({
          job: { jobRepositoryName: 'acme/app', workflowRunId: RUN_ID, jobDisplayName: 'build' },
        }),
      ],
      registrations: [registration('offline', T0 - 600_000)],
    });
    expect(correlate(f, T0 + 600_000).runners[0]?.loss).toBeNull();
  });
});

describe('a runner whose job has completed but which lives on (actions-runner-controller#4603, #4588 there)', () => {
  const done = (completedAt: number) =>
    job({ jobId: 77, completedAt: iso(completedAt), conclusion: 'success' }, []);
  it.each<[string, Facts, number, string | null]>([
    [
      'a minute after its job, pod still Running',
      facts({ pods: [pod()], ephemeralRunners: [er()], jobs: [done(T0)] }),
      T0 + 60_000,
      'runner-stuck',
    ],
    [
      'seconds after its job: still exiting',
      facts({ pods: [pod()], ephemeralRunners: [er()], jobs: [done(T0)] }),
      T0 + 10_000,
      null,
    ],
    [
      'its EphemeralRunner is being deleted',
      facts({
        pods: [pod()],
        ephemeralRunners: [er({ deletionTimestamp: iso(T0 + 1000) })],
        jobs: [done(T0)],
      }),
      T0 + 600_000,
      null,
    ],
    [
      'its job is still running',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        jobs: [job({ status: 'in_progress', conclusion: null, completedAt: null })],
      }),
      T0 + 600_000,
      null,
    ],
  ])('%s → %s', (_, f, now, kind) => {
    const [v] = correlate(f, now).runners;
    expect(v?.loss?.cause.kind ?? null).toBe(kind);
  });

  it('is left alone, with no timer, while it may still exit: the sweep looks again once due', () => {
    const d = decide(
      facts({ pods: [pod()], ephemeralRunners: [er()], jobs: [done(T0)] }),
      DEFAULT_POLICY,
      T0 + 59_999,
    );
    expect(d.actions).toEqual([]);
    expect(d.wakeAt).toBeNull();
  });

  it('is freed at once: ARC will not free it', () => {
    const d = decide(
      facts({ pods: [pod()], ephemeralRunners: [er()], jobs: [done(T0)] }),
      DEFAULT_POLICY,
      T0 + 60_000,
    );
    expect(d.actions.map((a) => [a.rule, a.target.kind, a.cause?.kind])).toEqual([
      ['rule-1-free-poisoned-slot', 'delete-ephemeral-runner', 'runner-stuck'],
    ]);
  });
});

describe('stored node signals against the node as it is now', () => {
  const notReadyEvent = (at: number) => ({
    cluster: CLUSTER,
    nodeName: 'pool-github-runners-3-ogny9',
    instanceId: null,
    kind: 'node-not-ready' as const,
    signal: { source: 'node-event' as const, detail: 'NodeNotReady' },
    at,
  });
  it.each<[string, Facts, string | null]>([
    [
      'NotReady event, node still NotReady',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        nodes: [node({ ready: 'Unknown' })],
        nodeSignals: [notReadyEvent(T0)],
      }),
      'node-not-ready',
    ],
    [
      'NotReady event, node Ready again',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        nodes: [node()],
        nodeSignals: [notReadyEvent(T0)],
      }),
      null,
    ],
    [
      'NotReady event, node not listed',
      facts({ pods: [pod()], ephemeralRunners: [er()], nodeSignals: [notReadyEvent(T0)] }),
      'node-not-ready',
    ],
  ])('%s → %s', (_, f, kind) => {
    expect(only(f).loss?.cause.kind ?? null).toBe(kind);
  });

  it('a warning expires: an idle runner is not replaced for a spot warning from an hour ago', () => {
    const spot = { ...notReadyEvent(T0), kind: 'spot-interruption-warning' as const };
    const f = facts({
      pods: [pod()],
      ephemeralRunners: [er()],
      nodes: [node()],
      nodeSignals: [spot],
    });
    expect(correlate(f, T0 + 60_000).runners[0]?.nodeSignals.map((s) => s.kind)).toEqual([
      'spot-interruption-warning',
    ]);
    expect(correlate(f, T0 + 3_600_000).runners[0]?.nodeSignals).toEqual([]);
  });
});

describe('an event loss without a pod uid', () => {
  const lossAt = (at: number): Facts['losses'][number] => ({
    cluster: CLUSTER,
    namespace: NS,
    runnerName: NAME,
    podUid: null,
    nodeName: null,
    scaleSet: 'arc-runner-set',
    ownedByArc: true,
    cause: { kind: 'preemption' },
    signal: { source: 'pod-event', detail: 'Preempted' },
    at,
  });
  // rawPod is created at T0 - 60 s.
  it.each([
    ['after the pod was created: about this pod', T0, 'preemption'],
    ['before the pod was created: about an older pod', T0 - 120_000, null],
  ])('%s', (_, at, kind) => {
    const f = facts({
      pods: [pod()],
      ephemeralRunners: [er({ version: '0.13.1' })],
      losses: [lossAt(at)],
    });
    expect(only(f).loss?.cause.kind ?? null).toBe(kind);
  });
});

it('never throws on an absurd stored time', () => {
  const f = facts({
    ephemeralRunners: [er()],
    missingPods: [{ cluster: CLUSTER, namespace: NS, name: NAME, since: 1e20 }],
  });
  expect(() => decide(f, DEFAULT_POLICY, T0)).not.toThrow();
  expect(only(f).loss?.signal.detail).toContain('since 100000000000000000000');
});

/** The relative imports of a module, as paths from the repository root. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/from '(\.[^']+)\.js'/g)].map((m) =>
    normalize(join(dirname(file), `${m[1] as string}.ts`)),
  );
}

it('correlate and the modules it reaches import one another without a cycle', () => {
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (file: string, path: string[]) => {
    if (path.includes(file)) {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    if (done.has(file)) return;
    for (const next of importsOf(file)) visit(next, [...path, file]);
    done.add(file);
  };
  visit('functions/domain/correlate/correlate.ts', []);
  expect(done.has('functions/domain/correlate/runner-of-job.ts')).toBe(true);
  expect(cycles).toEqual([]);
});
