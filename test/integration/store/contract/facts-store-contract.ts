import { rerunKilledJob } from '../../../../functions/domain/decide/rules/rerun-killed-job.js';
import type { Action } from '../../../../functions/domain/model/action.js';
import type { JobRecord } from '../../../../functions/domain/model/facts.js';
import type { DueWake, FactsStore, StoredFacts } from '../../../../functions/ports/facts-store.js';

/** A facts store to hold to the contract, with the whole-table read the tests inspect it by. */
export interface FactsStoreUnderTest {
  store: FactsStore & { scanAll(now: number): Promise<StoredFacts> };
  close(): Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00Z');

function job(jobId: number, status: string, runAttempt = 1): JobRecord {
  return {
    repository: { id: 1, fullName: 'acme/api', owner: 'acme', name: 'api' },
    installationId: 7,
    annotations: null,
    job: {
      jobId,
      runId: 9_000_000_001,
      runAttempt,
      name: 'build',
      workflowName: 'CI',
      headBranch: 'main',
      labels: ['arc-linux'],
      status,
      conclusion: status === 'completed' ? 'failure' : null,
      runnerId: null,
      runnerName: null,
      runnerGroupId: null,
      runnerGroupName: null,
      htmlUrl: `https://github.com/acme/api/actions/runs/9000000001/job/${jobId}`,
      createdAt: '2026-03-01T12:00:00Z',
      startedAt: null,
      completedAt: null,
    },
  };
}

function rerunAction(key: string, dryRun = false): Action {
  return {
    key,
    rule: rerunKilledJob.id,
    target: {
      kind: 'rerun-failed-jobs',
      repo: 'acme/api',
      installationId: 7,
      runId: 1,
      runAttempt: 1,
      jobIds: [14541957942],
    },
    scope: {
      cluster: 'prod',
      namespace: 'arc',
      scaleSet: 'arc-linux',
      repo: 'acme/api',
      runnerName: 'r1',
      jobUrl: null,
    },
    cause: null,
    signal: null,
    reason: 'test',
    dryRun,
    budgetKeys: ['budget:acme/api#1#build'],
  };
}

/**
 * The facts store's contract, one suite for every implementation (DynamoDB on dynalite, SQLite
 * on a file). Its tests share one store, in order, as the engine's invocations do.
 */
export function describeFactsStoreContract(
  name: string,
  open: () => Promise<FactsStoreUnderTest>,
): void {
  describe(name, () => {
    let subject: FactsStoreUnderTest;
    let store: FactsStoreUnderTest['store'];
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(() => subject.close());

    it('keeps the newest state of a job whatever order observations arrive in', async () => {
      await store.recordJob(job(14541957942, 'completed'), T0);
      await store.recordJob(job(14541957942, 'queued'), T0 + 1);
      await store.recordJob(job(14541957942, 'in_progress'), T0 + 2);

      let jobs = (await store.scanAll(T0)).jobs.filter((j) => j.job.jobId === 14541957942);
      expect(jobs.map((j) => j.job.status)).toEqual(['completed']);

      await store.recordJob(job(14541957942, 'queued', 2), T0 + 3);
      jobs = (await store.scanAll(T0)).jobs.filter((j) => j.job.jobId === 14541957942);
      expect(jobs.map((j) => [j.job.runAttempt, j.job.status])).toEqual([[2, 'queued']]);
    });

    it('adds annotations to a stored job', async () => {
      await store.recordJob(job(555, 'completed'), T0);
      await store.setJobAnnotations(
        'acme/api',
        555,
        [{ annotation_level: 'failure', message: 'x' }],
        T0,
      );
      const stored = (await store.scanAll(T0)).jobs.find((j) => j.job.jobId === 555);
      expect(stored?.annotations).toEqual([{ annotation_level: 'failure', message: 'x' }]);
    });

    it('claims an action key once; a second claim sees the first and its outcome', async () => {
      const first = await store.claimAction(rerunAction('a1'), T0, 60_000);
      const second = await store.claimAction(rerunAction('a1'), T0 + 1, 60_000);
      expect(first.claimed).toBe(true);
      expect(second).toMatchObject({ claimed: false, existing: { key: 'a1', outcome: 'claimed' } });

      await store.finishAction('a1', 'succeeded', T0 + 2, 'done');
      const third = await store.claimAction(rerunAction('a1'), T0 + 10 * 60_000, 60_000);
      expect(third).toMatchObject({
        claimed: false,
        existing: { outcome: 'succeeded', finishedAt: T0 + 2 },
      });
    });

    it('lets a key be claimed again after retry-later, or when a claim went stale without result', async () => {
      await store.claimAction(rerunAction('b1'), T0, 60_000);
      await store.finishAction('b1', 'retry-later', T0, '403 already running');
      expect((await store.claimAction(rerunAction('b1'), T0 + 1, 60_000)).claimed).toBe(true);

      await store.claimAction(rerunAction('c1'), T0, 60_000);
      expect((await store.claimAction(rerunAction('c1'), T0 + 59_000, 60_000)).claimed).toBe(false);
      const stale = await store.claimAction(rerunAction('c1'), T0 + 61_000, 60_000);
      expect(stale).toMatchObject({
        claimed: true,
        previous: { outcome: 'claimed', claimedAt: T0 },
      });
    });

    it('lists actions with their outcome for decide()', async () => {
      const actions = (await store.scanAll(T0)).actions;
      expect(actions.find((a) => a.key === 'a1')).toMatchObject({
        kind: 'rerun-failed-jobs',
        rule: rerunKilledJob.id,
        outcome: 'succeeded',
        jobIds: [14541957942],
        budgetKeys: ['budget:acme/api#1#build'],
      });
    });

    it('caches the first sight of ER job fields and of a missing pod', async () => {
      const entry = {
        cluster: 'prod',
        namespace: 'arc',
        runnerName: 'arc-linux-abcde-runner-fghij',
        scaleSet: 'arc-linux',
        runnerId: 12,
        job: {
          jobId: 'guid',
          jobRequestId: 1,
          jobRepositoryName: 'acme/api',
          jobWorkflowRef: null,
          workflowRunId: 5,
          jobDisplayName: 'build',
        },
        seenAt: T0,
      };
      await store.cacheErJob(entry, T0);
      await store.cacheErJob({ ...entry, seenAt: T0 + 5000 }, T0 + 5000);
      await store.recordMissingPod({ cluster: 'prod', namespace: 'arc', name: 'p', since: T0 }, T0);
      await store.recordMissingPod(
        { cluster: 'prod', namespace: 'arc', name: 'p', since: T0 + 9 },
        T0 + 9,
      );

      const facts = await store.scanAll(T0 + 10_000);
      expect(facts.erJobCache.map((e) => e.seenAt)).toEqual([T0]);
      expect(facts.missingPods.map((m) => m.since)).toEqual([T0]);

      await store.clearMissingPod('prod', 'arc', 'p');
      expect((await store.scanAll(T0 + 10_000)).missingPods).toEqual([]);
    });

    it('keeps the earliest future wake-up', async () => {
      await store.scheduleWake(T0 + 60_000, T0);
      await store.scheduleWake(T0 + 90_000, T0);
      await store.scheduleWake(T0 + 30_000, T0);
      expect(await store.nextWake(T0)).toBe(T0 + 30_000);
      await store.scheduleWake(T0 + 120_000, T0 + 40_000);
      expect(await store.nextWake(T0 + 40_000)).toBe(T0 + 120_000);
    });

    it('hides facts past their time to live', async () => {
      await store.recordLoss(
        {
          cluster: 'prod',
          namespace: 'arc',
          runnerName: 'old',
          podUid: 'u',
          nodeName: null,
          scaleSet: 'arc-linux',
          ownedByArc: true,
          cause: { kind: 'pod-gc' },
          signal: { source: 'pod-condition', detail: 'DeletionByPodGC' },
          at: T0,
        },
        T0,
      );
      expect((await store.scanAll(T0)).losses.map((l) => l.runnerName)).toEqual(['old']);
      expect((await store.scanAll(T0 + 2 * 24 * 3600 * 1000)).losses).toEqual([]);
    });

    it('keeps the audit trail by day, after publication, for replay', async () => {
      const DAY = 24 * 3600 * 1000;
      const event = (n: string) => ({ detailType: 'Remediation', detail: { key: n } });
      for (const [key, at] of [
        ['trail-1', T0 - 2 * DAY],
        ['trail-2', T0 - DAY + 60_000],
        ['trail-3', T0],
      ] as const) {
        await store.claimAction(rerunAction(key), at, 60_000);
        await store.finishAction(key, 'succeeded', at, 'done', event(key));
      }
      await store.markPublished('trail-2');
      // An action finished without an audit event is not in the trail.
      await store.claimAction(rerunAction('no-trail'), T0, 60_000);
      await store.finishAction('no-trail', 'succeeded', T0, 'done');

      const lastTwoDays = await store.auditTrail(T0 - 1.5 * DAY, T0, 100);
      expect(lastTwoDays.map((r) => [r.at, r.detail.key])).toEqual([
        [T0 - DAY + 60_000, 'trail-2'],
        [T0, 'trail-3'],
      ]);
      expect((await store.auditTrail(T0 - 3 * DAY, T0, 100)).map((r) => r.detail.key)).toEqual([
        'trail-1',
        'trail-2',
        'trail-3',
      ]);
      expect(await store.auditTrail(T0 - 3 * DAY, T0, 1)).toHaveLength(1);
    });

    it('lets one of many concurrent claims of a key win', async () => {
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          store.claimAction(rerunAction('race-1'), T0 + i, 60_000),
        ),
      );
      expect(claims.filter((c) => c.claimed)).toHaveLength(1);
      expect(claims.filter((c) => !c.claimed)).toHaveLength(11);
    });

    it('files a runner’s facts under its name and its namespace, and names the runner', async () => {
      const runner = { cluster: 'prod', namespace: 'arc-r', runnerName: 'arc-linux-x-runner-r1' };
      const signal = { source: 'pod-condition', detail: 'DisruptionTarget' } as const;
      await store.recordLoss(
        {
          ...runner,
          podUid: 'u1',
          nodeName: 'n1',
          scaleSet: 'arc-linux',
          ownedByArc: true,
          cause: { kind: 'pod-gc' },
          signal,
          at: null,
        },
        T0,
      );
      await store.recordRunnerWarning(
        { ...runner, kind: 'karpenter-disruption', signal, at: T0 },
        T0,
      );
      await store.claimAction(
        {
          ...rerunAction('on-runner'),
          scope: { ...rerunAction('on-runner').scope, runnerName: runner.runnerName },
        },
        T0,
        60_000,
      );

      const byName = await store.readRunnerName(runner.runnerName, T0);
      // A loss recorded without a time is dated when it was recorded.
      expect(byName.facts.losses.map((l) => [l.podUid, l.at])).toEqual([['u1', T0]]);
      expect(byName.facts.runnerWarnings.map((w) => w.kind)).toEqual(['karpenter-disruption']);
      expect(byName.facts.actions.map((a) => a.key)).toEqual(['on-runner']);
      expect(byName.runners).toEqual([
        { cluster: 'prod', namespace: 'arc-r', name: runner.runnerName },
      ]);
      expect(byName.itemsRead).toBe(3);

      const byNamespace = await store.readNamespace('prod', 'arc-r', T0);
      expect(byNamespace.facts.losses).toHaveLength(1);
      expect(byNamespace.facts.runnerWarnings).toHaveLength(1);
      expect(byNamespace.facts.actions).toEqual([]);
      expect((await store.readNamespace('prod', 'other', T0)).itemsRead).toBe(0);
    });

    it('reads a node’s signals and the runners seen on it, and an instance’s node', async () => {
      const signal = { source: 'node-event', detail: 'SpotInterrupted' } as const;
      await store.recordNodeSignal(
        {
          cluster: 'prod',
          nodeName: 'n7',
          instanceId: 'i-7',
          kind: 'spot-interruption-warning',
          signal,
          at: T0,
        },
        T0,
      );
      await store.recordInstance('i-7', 'prod', 'n7', T0);
      const onNode = {
        cluster: 'prod',
        namespace: 'arc-r',
        name: 'arc-linux-x-runner-r7',
        nodeName: 'n7',
        podUid: 'p7',
        ephemeralRunnerUid: 'e7',
        scaleSet: 'arc-linux',
        runnerId: 70,
        seenAt: T0,
      };
      await store.recordRunnerOnNode(onNode, T0);

      const node = await store.readNode('prod', 'n7', T0);
      expect(node.facts.nodeSignals.map((n) => n.kind)).toEqual(['spot-interruption-warning']);
      expect(node.runnersOnNode).toEqual([onNode]);
      const instance = await store.readInstance('i-7', T0);
      expect(instance.node).toEqual({ cluster: 'prod', nodeName: 'n7' });
      expect(instance.read.facts.nodeSignals).toHaveLength(1);
      expect((await store.readInstance('i-unknown', T0)).node).toBeNull();
    });

    it('keeps a runner that took a job on its node as its job cache too, first sight kept', async () => {
      const job = {
        jobId: 'guid-9',
        jobRequestId: 9,
        jobRepositoryName: 'acme/api',
        jobWorkflowRef: null,
        workflowRunId: 9_000_000_001,
        jobDisplayName: 'build',
      };
      const onNode = {
        cluster: 'prod',
        namespace: 'arc-r',
        name: 'arc-linux-x-runner-r9',
        nodeName: 'n9',
        podUid: 'p9',
        ephemeralRunnerUid: 'e9',
        scaleSet: 'arc-linux',
        runnerId: 90,
        seenAt: T0,
        job,
      };
      // Placed first without its job (its webhook came before ARC wrote it), then with it.
      const placed = { ...onNode, job: undefined };
      delete placed.job;
      await store.recordRunnerOnNode({ ...placed, seenAt: T0 - 5_000 }, T0 - 5_000);
      // Placed again before ARC writes the job (another event's read): kept as first placed.
      await store.recordRunnerOnNode({ ...placed, seenAt: T0 - 2_000 }, T0 - 2_000);
      expect((await store.readNode('prod', 'n9', T0)).runnersOnNode.map((r) => r.seenAt)).toEqual([
        T0 - 5_000,
      ]);
      expect((await store.readRunnerName('arc-linux-x-runner-r9', T0)).facts.erJobCache).toEqual(
        [],
      );
      await store.recordRunnerOnNode(onNode, T0);
      // Seen again later (another container, another sweep), with or without: the first sight
      // of its job stands.
      await store.recordRunnerOnNode({ ...onNode, seenAt: T0 + 60_000 }, T0 + 60_000);
      await store.recordRunnerOnNode({ ...placed, seenAt: T0 + 60_000 }, T0 + 60_000);
      const cache = {
        cluster: 'prod',
        namespace: 'arc-r',
        runnerName: 'arc-linux-x-runner-r9',
        scaleSet: 'arc-linux',
        runnerId: 90,
        job,
        seenAt: T0,
      };
      const byName = await store.readRunnerName('arc-linux-x-runner-r9', T0 + 60_000);
      expect(byName.facts.erJobCache).toEqual([cache]);
      expect(byName.runners).toEqual([
        { cluster: 'prod', namespace: 'arc-r', name: 'arc-linux-x-runner-r9' },
      ]);
      expect((await store.readNamespace('prod', 'arc-r', T0)).facts.erJobCache).toEqual([cache]);
      // On its node it is a placement, not a cache to join.
      const node = await store.readNode('prod', 'n9', T0);
      expect(node.runnersOnNode).toEqual([onNode]);
      expect(node.facts.erJobCache).toEqual([]);
      expect(node.runners).toEqual([]);
    });

    it('reads every node signal of a cluster in one read, without the runners on its nodes', async () => {
      const signal = { source: 'node-event', detail: 'NodeNotReady' } as const;
      const at = (cluster: string, nodeName: string) => ({
        cluster,
        nodeName,
        instanceId: null,
        kind: 'node-not-ready' as const,
        signal,
        at: T0,
      });
      await store.recordNodeSignal(at('east', 'n1'), T0);
      await store.recordNodeSignal(at('east', 'n2'), T0);
      await store.recordNodeSignal(at('west', 'n1'), T0);
      await store.recordRunnerOnNode(
        {
          cluster: 'east',
          namespace: 'arc-r',
          name: 'arc-linux-x-runner-r1',
          nodeName: 'n1',
          podUid: 'p1',
          ephemeralRunnerUid: 'e1',
          scaleSet: 'arc-linux',
          runnerId: 10,
          seenAt: T0,
        },
        T0,
      );

      const east = await store.readClusterNodeSignals('east', T0);
      expect(east.facts.nodeSignals.map((s) => s.nodeName).sort()).toEqual(['n1', 'n2']);
      expect(east.itemsRead).toBe(2);
      expect((await store.readClusterNodeSignals('west', T0)).facts.nodeSignals).toHaveLength(1);
      expect((await store.readClusterNodeSignals('none', T0)).itemsRead).toBe(0);
      const dayLater = T0 + 2 * 24 * 3600 * 1000;
      expect((await store.readClusterNodeSignals('east', dayLater)).facts.nodeSignals).toEqual([]);
    });

    it('reads a run’s jobs and runs, an owner’s queued jobs and the owners known', async () => {
      const queued = job(777, 'queued');
      await store.recordJob(queued, T0);
      await store.recordRun(
        {
          repository: queued.repository,
          installationId: 7,
          run: {
            runId: queued.job.runId,
            runAttempt: 1,
            name: 'CI',
            status: 'in_progress',
            conclusion: null,
            event: 'push',
            htmlUrl: 'https://github.com/acme/api/actions/runs/9000000001',
            createdAt: '2026-03-01T12:00:00Z',
            updatedAt: '2026-03-01T12:00:00Z',
            runStartedAt: null,
          },
        } as Parameters<typeof store.recordRun>[0],
        T0,
      );
      const run = await store.readRun('acme/api', queued.job.runId, T0);
      expect(run.facts.jobs.map((j) => j.job.jobId)).toContain(777);
      expect(run.facts.runs.map((r) => r.run.runAttempt)).toEqual([1]);
      expect(
        (await store.readJob('acme/api', 777, T0)).facts.jobs.map((j) => j.job.status),
      ).toEqual(['queued']);
      expect((await store.readQueuedJobs('acme', T0)).facts.jobs.map((j) => j.job.jobId)).toContain(
        777,
      );

      // Picked up by a runner, it leaves the queued index and is found by the runner's name.
      await store.recordJob(
        {
          ...queued,
          job: { ...queued.job, status: 'in_progress', runnerName: 'arc-linux-x-runner-q' },
        },
        T0 + 1,
      );
      expect(
        (await store.readQueuedJobs('acme', T0)).facts.jobs.map((j) => j.job.jobId),
      ).not.toContain(777);
      expect(
        (await store.readRunnerName('arc-linux-x-runner-q', T0)).facts.jobs.map((j) => j.job.jobId),
      ).toEqual([777]);
      expect(await store.knownOwners(T0)).toEqual([{ owner: 'acme', installationId: 7 }]);
    });

    it('files a job that finished on a runner under the minute it was recorded finished', async () => {
      const ran = (jobId: number, completedAt: number | null) => {
        const j = job(jobId, 'completed');
        return {
          ...j,
          job: {
            ...j.job,
            runnerName: `arc-linux-x-runner-${jobId}`,
            completedAt: completedAt === null ? null : new Date(completedAt).toISOString(),
          },
        };
      };
      const ids = async (from: number, to: number) =>
        (await store.readFinishedJobs(from, to, T0 + 600_000)).facts.jobs
          .map((j) => j.job.jobId)
          .sort();
      await store.recordJob(ran(801, T0 + 5_000), T0 + 6_000);
      await store.recordJob(ran(802, T0 + 70_000), T0 + 71_000);
      // Its webhook came late: filed when it was recorded, so a sweep past its end still finds it.
      await store.recordJob(ran(803, T0 + 10_000), T0 + 185_000);
      // Finished with no runner (cancelled while queued): no runner to look at.
      await store.recordJob(job(804, 'completed'), T0 + 7_000);
      expect(await ids(T0, T0 + 59_999)).toEqual([801]);
      expect(await ids(T0, T0 + 119_999)).toEqual([801, 802]);
      expect(await ids(T0 + 120_000, T0 + 240_000)).toEqual([803]);
      expect(await ids(T0 + 240_000, T0 + 600_000)).toEqual([]);
    });

    it('merges where scale sets live, and keeps registrations by owner until deleted', async () => {
      expect(await store.readScaleSets(T0)).toEqual({ sets: {}, itemsRead: 0 });
      await store.recordScaleSets('prod', { 'arc-linux': ['prod/arc-b'] }, T0);
      await store.recordScaleSets(
        'staging',
        { 'arc-linux': ['prod/arc-a', 'prod/arc-b'], gpu: ['staging/gpu'] },
        T0,
      );
      expect(await store.readScaleSets(T0)).toEqual({
        sets: { 'arc-linux': ['prod/arc-a', 'prod/arc-b'], gpu: ['staging/gpu'] },
        itemsRead: 1,
      });

      const registration = {
        id: 42,
        name: 'arc-linux-x-runner-reg',
        status: 'offline',
        busy: false,
        labels: ['arc-linux'],
        owner: { org: 'acme' },
        installationId: 7,
        offlineSince: T0,
      };
      await store.putRegistration(registration, T0);
      await store.putRegistration({ ...registration, id: 43, owner: { repo: 'other/x' } }, T0);
      expect((await store.readRegistrations('acme', T0)).facts.registrations).toEqual([
        registration,
      ]);
      expect((await store.readRunnerName(registration.name, T0)).facts.registrations).toHaveLength(
        2,
      );
      await store.deleteRegistration(registration);
      expect((await store.readRegistrations('acme', T0)).facts.registrations).toEqual([]);
      expect(
        (await store.readRegistrations('other', T0)).facts.registrations.map((r) => r.id),
      ).toEqual([43]);
    });

    it('keeps a breaker open for its window, and holds subjects in order only on a breaker that exists', async () => {
      await store.holdInBreaker('none', 'arc-linux', ['job:a'], T0);
      expect((await store.readBreaker('none', 'arc-linux', T0)).facts.breakers).toEqual([]);

      await store.countLoss({ cluster: 'prod', scaleSet: null, runner: 'r1', at: T0 }, 900_000, T0);
      await store.countLoss(
        { cluster: 'prod', scaleSet: null, runner: 'r1', at: T0 + 5 },
        900_000,
        T0 + 5,
      );
      await store.openBreaker('prod', null, T0, T0 + 900_000, T0);
      // A second trip inside the window does not move it.
      await store.openBreaker('prod', null, T0 + 1_000, T0 + 901_000, T0 + 1_000);
      await store.holdInBreaker('prod', null, ['job:a', 'job:b'], T0);
      await store.holdInBreaker('prod', null, ['job:b', 'job:c'], T0);
      expect((await store.readBreaker('prod', null, T0)).facts.breakers).toEqual([
        {
          cluster: 'prod',
          scaleSet: null,
          losses: { r1: T0 },
          trippedAt: T0,
          openUntil: T0 + 900_000,
          held: ['job:a', 'job:b', 'job:c'],
        },
      ]);
      // Once it has closed, a new trip opens it again and starts a new list of held subjects.
      await store.openBreaker('prod', null, T0 + 950_000, T0 + 1_850_000, T0 + 950_000);
      expect((await store.readBreaker('prod', null, T0 + 950_000)).facts.breakers[0]).toMatchObject(
        {
          trippedAt: T0 + 950_000,
          openUntil: T0 + 1_850_000,
          held: [],
        },
      );
    });

    it('keeps the outbox until published, and lists claims left without a result', async () => {
      await store.claimAction(rerunAction('outbox-1'), T0, 60_000);
      await store.finishAction('outbox-1', 'succeeded', T0, 'done', {
        detailType: 'Remediation',
        detail: { key: 'outbox-1' },
      });
      await store.claimAction(rerunAction('stuck-1'), T0, 60_000);

      const outbox = await store.unpublishedAudits(100);
      expect(outbox).toContainEqual({
        key: 'outbox-1',
        event: { detailType: 'Remediation', detail: { key: 'outbox-1' } },
      });
      await store.markPublished('outbox-1');
      expect((await store.unpublishedAudits(100)).map((a) => a.key)).not.toContain('outbox-1');

      expect((await store.staleClaims(T0 + 30_000, 60_000)).map((c) => c.key)).not.toContain(
        'stuck-1',
      );
      const stale = await store.staleClaims(T0 + 61_000, 60_000);
      expect(stale.find((c) => c.key === 'stuck-1')).toEqual({
        key: 'stuck-1',
        target: rerunAction('stuck-1').target,
        claimedAt: T0,
        action: rerunAction('stuck-1'),
      });
      expect(stale.map((c) => c.key)).not.toContain('outbox-1');
    });

    it('gives due wake-ups oldest first, ordered ones in their order, until cleared', async () => {
      const at = T0 + 5 * 60_000;
      await store.scheduleWake(at, T0, ['job:z']);
      await store.scheduleWake(at, T0, ['job:held-2', 'job:held-1'], 3);
      await store.scheduleWake(at - 60_000, T0, ['job:early']);
      expect(await store.dueWakes(at - 60_001, 10)).toEqual([]);
      const due = await store.dueWakes(at, 10);
      const timers = (wakes: DueWake[]) => wakes.map(({ key: _key, ...timer }) => timer);
      expect(timers(due)).toEqual([
        { at: at - 60_000, subjects: ['job:early'] },
        { at, subjects: ['job:held-2', 'job:held-1'], position: 3 },
        { at, subjects: ['job:z'] },
      ]);
      expect(await store.dueWakes(at, 2)).toEqual(due.slice(0, 2));
      for (const wake of due.slice(0, 2)) await store.clearWake(wake);
      expect(timers(await store.dueWakes(at, 10))).toEqual([{ at, subjects: ['job:z'] }]);
    });

    it('keeps one timer item a decision, however many subjects, and the same timer set twice once', async () => {
      const at = T0 + 7 * 60_000;
      await store.scheduleWake(at, T0, ['job:a', 'run:a', 'runner:a']);
      await store.scheduleWake(at, T0, ['job:a', 'run:a', 'runner:a']);
      await store.scheduleWake(at, T0, ['job:b']);
      const due = (await store.dueWakes(at, 10)).filter((w) => w.at === at);
      expect(due.map((w) => w.subjects)).toEqual(
        expect.arrayContaining([['job:a', 'run:a', 'runner:a'], ['job:b']]),
      );
      expect(due).toHaveLength(2);
      await store.clearWake(due[0] as DueWake);
      expect((await store.dueWakes(at, 10)).filter((w) => w.at === at)).toEqual(due.slice(1));
    });

    it('keeps the sweep’s place, and sets aside a subject after five failures', async () => {
      expect(await store.repositoryScan('acme')).toBe(0);
      await store.setRepositoryScan('acme', 12, T0);
      expect(await store.repositoryScan('acme')).toBe(12);
      expect(await store.sweepCursor('prod')).toBeNull();
      await store.setSweepCursor(
        'prod',
        { namespaceIndex: 3, passStartedAt: T0, lastPassStartedAt: null },
        T0,
      );
      expect(await store.sweepCursor('prod')).toEqual({
        namespaceIndex: 3,
        passStartedAt: T0,
        lastPassStartedAt: null,
      });
      await store.setSweepCursor('prod', null, T0);
      expect(await store.sweepCursor('prod')).toBeNull();

      const counts = [];
      for (let i = 0; i < 5; i++) counts.push(await store.noteFailure('job:flaky', T0 + i));
      expect(counts.map((c) => [c.failures, c.setAside])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, false],
        [5, true],
      ]);
      expect(await store.isSetAside('job:flaky', T0)).toBe(false);
      await store.setAside('job:flaky', T0 + 60_000, T0);
      expect(await store.isSetAside('job:flaky', T0 + 59_999)).toBe(true);
      expect(await store.isSetAside('job:flaky', T0 + 60_000)).toBe(false);
    });
  });
}
