import { rerunKilledJob } from '../../../../functions/domain/decide/rules/rerun-killed-job.js';
import type { Action } from '../../../../functions/domain/model/action.js';
import type { JobRecord } from '../../../../functions/domain/model/facts.js';
import type { FactsStore, StoredFacts } from '../../../../functions/ports/facts-store.js';

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
  });
}
