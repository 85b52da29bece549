/**
 * The two user reports that started the project (shared/seeds/), end to end through
 * parse → classify → correlate → decide, with their real messages.
 */
import { findRunnerLoss } from '../../../functions/domain/classify/annotations.js';
import { classifyEvent } from '../../../functions/domain/classify/classify.js';
import { correlate } from '../../../functions/domain/correlate/correlate.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import { parseClusterInput } from '../../../functions/domain/parse/parse-cluster-input.js';
import {
  parseEphemeralRunner,
  parsePod,
} from '../../../functions/domain/parse/parse-kube-object.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { RUN_ID, facts, job, run, unwrap } from './builders.js';
import {
  CLUSTER,
  NS,
  SHUTDOWN_ANNOTATION,
  T0,
  envelope,
  exportedEvent,
  iso,
  rawEr,
  rawPod,
} from './fixtures.js';

/** What the engine does with a cluster input: parse, classify, store. */
function ingest(f: Facts, raw: unknown): Facts {
  const input = unwrap(parseClusterInput(raw));
  if (input.kind !== 'kube-events') throw new Error('expected Kubernetes events');
  let out = f;
  for (const ev of input.events) {
    const c = classifyEvent(ev);
    if (c.kind === 'loss') out = { ...out, losses: [...out.losses, c.loss] };
    if (c.kind === 'node-signal') out = { ...out, nodeSignals: [...out.nodeSignals, c.signal] };
  }
  return out;
}

describe('seed 000: runner evicted before pick-up, old ARC, the queue starves', () => {
  const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
  // mikeclayton (MemoryPressure, ARC 0.4.0) and 0x39 (DiskPressure, ARC 0.8.2).
  it.each([
    ['MemoryPressure', '0.4.0', 'memory'],
    ['DiskPressure', '0.8.2', 'disk'],
  ])(
    '%s on ARC %s: the slot is freed within 5 s of the eviction event',
    (condition, version, resource) => {
      const queued = job({
        jobId: 14_541_957_942,
        status: 'queued',
        conclusion: null,
        runnerName: null,
        runnerId: null,
        createdAt: iso(T0 - 5_000),
      });
      const evicted = envelope(
        exportedEvent({
          reason: 'Evicted',
          message: `The node had condition: [${condition}].`,
          component: 'kubelet',
          at: T0,
        }),
      );

      // 1. The event alone: classified, and decide asks for the EphemeralRunner.
      let f = ingest(facts({ jobs: [queued] }), evicted);
      expect(f.losses[0]?.cause).toEqual({ kind: 'admission-reject', resource, detail: condition });
      expect(f.losses[0]?.signal.detail).toBe(
        `Evicted (kubelet): The node had condition: [${condition}].`,
      );
      const first = decide(f, DEFAULT_POLICY, T0 + 200);
      expect(first.actions).toEqual([]);
      expect(first.needs).toEqual([
        { kind: 'ephemeral-runner', cluster: CLUSTER, namespace: NS, name: NAME },
      ]);

      // 2. The engine reads the ER and the pod (as `kubectl describe` showed them).
      const pod = unwrap(
        parsePod(
          rawPod({
            phase: 'Failed',
            reason: 'Evicted',
            message: `Pod was rejected: The node had condition: [${condition}]. `,
            version,
          }),
          CLUSTER,
        ),
      );
      const er = unwrap(parseEphemeralRunner(rawEr({ version }), CLUSTER));
      f = { ...f, pods: [pod], ephemeralRunners: [er] };
      const c = correlate(f, T0 + 400);
      expect(c.runners).toHaveLength(1);
      expect(c.runners[0]).toMatchObject({
        arcOwned: true,
        legacyArc: true,
        busy: false,
        scaleSet: 'arc-runner-set',
      });

      const d = decide(f, DEFAULT_POLICY, T0 + 400);
      expect(d.actions).toHaveLength(1);
      expect(d.actions[0]).toMatchObject({
        rule: 'rule-1-free-poisoned-slot',
        target: { kind: 'delete-ephemeral-runner', name: NAME, uid: `uid-er-${NAME}` },
        cause: { kind: 'admission-reject', resource },
        dryRun: false,
      });
    },
  );
});

describe('seed 004: Karpenter consolidation kills a busy runner mid-job', () => {
  const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
  const jobFields = {
    jobId: 'a1b2c3d4-guid',
    jobRepositoryName: 'acme/app',
    workflowRunId: RUN_ID,
    jobDisplayName: 'build',
  };

  it('is re-run, with its fail-fast sibling, by one call the moment the run completes', () => {
    // The runner took the job: ER job fields cached when first seen (ARC deletes the ER quickly).
    const er = unwrap(parseEphemeralRunner(rawEr({ version: '0.13.1', job: jobFields }), CLUSTER));
    let f = facts({
      erJobCache: [
        {
          cluster: CLUSTER,
          namespace: NS,
          runnerName: NAME,
          scaleSet: 'arc-runner-set',
          runnerId: er.runnerId,
          job: er.job,
          seenAt: T0 - 300_000,
        },
      ],
      jobs: [job({ jobId: 501, status: 'in_progress', conclusion: null, completedAt: null })],
    });

    // Karpenter drains the node: DisruptionTerminating on the node, then "Evicted pod: Underutilized".
    f = ingest(
      f,
      envelope(
        exportedEvent({
          reason: 'DisruptionTerminating',
          message: 'Disrupting Node: Underutilized/Delete',
          component: 'karpenter',
          kind: 'Node',
          name: 'ip-10-0-1-23.eu-west-1.compute.internal',
          at: T0 - 1_000,
        }),
      ),
    );
    f = ingest(
      f,
      envelope(
        exportedEvent({
          reason: 'Evicted',
          message: 'Evicted pod: Underutilized',
          component: 'karpenter',
          at: T0,
        }),
      ),
    );
    expect(f.losses[0]?.cause).toEqual({
      kind: 'api-eviction',
      by: 'karpenter',
      karpenterReason: 'consolidation',
    });

    // ARC ≥ 0.13 deleted the ER itself; a listing shows it gone. Nothing to free, nothing to re-run yet.
    f = { ...f, listings: [{ cluster: CLUSTER, namespace: NS, at: T0 + 5_000 }] };
    expect(decide(f, DEFAULT_POLICY, T0 + 10_000).actions).toEqual([]);

    // The job fails: decide asks for its annotations before judging it.
    const failed = job({ jobId: 501, completedAt: iso(T0 + 20_000) }, null);
    const asks = decide({ ...f, jobs: [failed] }, DEFAULT_POLICY, T0 + 20_500);
    expect(asks.actions).toEqual([]);
    expect(asks.needs).toContainEqual({
      kind: 'annotations',
      repo: 'acme/app',
      installationId: 77,
      jobId: 501,
    });

    // They hold the runner's shutdown signal; a sibling was cancelled by fail-fast.
    const killed = job({ jobId: 501, completedAt: iso(T0 + 20_000) }, [
      { annotation_level: 'failure', message: SHUTDOWN_ANNOTATION, path: '.github' },
      { annotation_level: 'failure', message: 'The operation was canceled.', path: '.github' },
    ]);
    expect(findRunnerLoss(killed.annotations ?? [])?.signal).toBe('shutdown-signal');
    const sibling = job(
      {
        jobId: 502,
        name: 'test (ubuntu, 2)',
        conclusion: 'cancelled',
        runnerName: 'arc-runner-set-2fh9q-runner-other',
      },
      [],
    );
    f = { ...f, jobs: [killed, sibling], runs: [run({ status: 'in_progress', conclusion: null })] };
    const waiting = decide(f, DEFAULT_POLICY, T0 + 21_000);
    expect(waiting.actions.map((a) => a.target.kind)).toEqual(['await-run-completion']);

    // workflow_run.completed: re-run both by one call.
    f = { ...f, runs: [run({ updatedAt: iso(T0 + 600_000) })] };
    const done = decide(f, DEFAULT_POLICY, T0 + 600_000);
    expect(done.actions).toHaveLength(1);
    expect(done.actions[0]).toMatchObject({
      rule: 'rule-3-rerun-killed-job',
      target: {
        kind: 'rerun-failed-jobs',
        repo: 'acme/app',
        runId: RUN_ID,
        runAttempt: 1,
        jobIds: [501, 502],
      },
      cause: { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'consolidation' },
      signal: { source: 'pod-event', detail: 'Evicted (karpenter): Evicted pod: Underutilized' },
      scope: { cluster: CLUSTER, namespace: NS, runnerName: NAME, repo: 'acme/app' },
    });
  });
});
