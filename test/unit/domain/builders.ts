/** Typed facts for decide() tests, built from the raw fixtures through the real parsers. */
import type { JobAnnotation } from '../../../functions/domain/classify/annotations.js';
import type {
  ActionRecord,
  Facts,
  JobRecord,
  RunRecord,
} from '../../../functions/domain/model/facts.js';
import { emptyFacts } from '../../../functions/domain/model/facts.js';
import type { JobFacts } from '../../../functions/domain/model/observation.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse/parse-kube-event.js';
import {
  parseEphemeralRunner,
  parseNode,
  parsePod,
} from '../../../functions/domain/parse/parse-kube-object.js';
import { classifyEvent } from '../../../functions/domain/classify/classify.js';
import type { Result } from '../../../functions/domain/model/result.js';
import { CLUSTER, SCALE_SET, T0, exportedEvent, iso, rawEr, rawNode, rawPod } from './fixtures.js';

export const REPO = { id: 1, fullName: 'acme/app', owner: 'acme', name: 'app' };
export const RUN_ID = 9_000_000_001;

export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

export const pod = (o: Parameters<typeof rawPod>[0] = {}) => unwrap(parsePod(rawPod(o), CLUSTER));
export const er = (o: Parameters<typeof rawEr>[0] = {}) =>
  unwrap(parseEphemeralRunner(rawEr(o), CLUSTER));
export const node = (o: Parameters<typeof rawNode>[0] = {}) =>
  unwrap(parseNode(rawNode(o), CLUSTER));

/** Classify an exported event into facts, as the engine would store it. */
export function withEvent(facts: Facts, raw: Parameters<typeof exportedEvent>[0]): Facts {
  const c = classifyEvent(unwrap(parseExportedKubeEvent(exportedEvent(raw))));
  if (c.kind === 'loss') return { ...facts, losses: [...facts.losses, c.loss] };
  if (c.kind === 'node-signal') return { ...facts, nodeSignals: [...facts.nodeSignals, c.signal] };
  if (c.kind === 'runner-warning')
    return { ...facts, runnerWarnings: [...facts.runnerWarnings, c.warning] };
  throw new Error(`event ignored: ${c.reason}`);
}

let nextJobId = 14_541_957_942;
export function job(
  o: Partial<JobFacts> = {},
  annotations: JobAnnotation[] | null = null,
): JobRecord {
  const jobId = o.jobId ?? nextJobId++;
  return {
    repository: REPO,
    installationId: 77,
    annotations,
    job: {
      jobId,
      runId: RUN_ID,
      runAttempt: 1,
      name: 'build',
      workflowName: 'CI',
      headBranch: 'main',
      labels: [SCALE_SET],
      status: 'completed',
      conclusion: 'failure',
      runnerId: 42,
      runnerName: 'arc-runner-set-2fh9q-runner-tkvlz',
      runnerGroupId: 1,
      runnerGroupName: 'Default',
      htmlUrl: `https://github.com/acme/app/actions/runs/${RUN_ID}/job/${jobId}`,
      createdAt: iso(T0 - 600_000),
      startedAt: iso(T0 - 590_000),
      completedAt: iso(T0),
      ...o,
    },
  };
}

export function run(o: Partial<RunRecord['run']> = {}): RunRecord {
  return {
    repository: REPO,
    installationId: 77,
    run: {
      runId: RUN_ID,
      runAttempt: 1,
      name: 'CI',
      status: 'completed',
      conclusion: 'failure',
      event: 'push',
      htmlUrl: `https://github.com/acme/app/actions/runs/${RUN_ID}`,
      createdAt: iso(T0 - 600_000),
      updatedAt: iso(T0 + 60_000),
      runStartedAt: iso(T0 - 600_000),
      ...o,
    },
  };
}

export function record(
  o: Partial<ActionRecord> & Pick<ActionRecord, 'key' | 'kind'>,
): ActionRecord {
  return {
    rule: 'rule-3-rerun-killed-job',
    claimedAt: T0,
    outcome: 'succeeded',
    finishedAt: T0,
    dryRun: false,
    budgetKeys: [],
    jobIds: [],
    ...o,
  };
}

export const facts = (o: Partial<Facts> = {}): Facts => ({ ...emptyFacts(), ...o });

/** A runner with n distinct names, all evicted at `at`. */
export function evictedRunners(n: number, at: number, scaleSet = SCALE_SET): Facts {
  const pods = [];
  const ers = [];
  for (let i = 0; i < n; i++) {
    const name = `${scaleSet}-abcde-runner-r${i}`;
    const p = pod({
      name,
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure]. ',
      conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(at) }],
      labels: undefined,
      version: '0.13.1',
    });
    pods.push({
      ...p,
      metadata: {
        ...p.metadata,
        labels: { ...p.metadata.labels, 'actions.github.com/scale-set-name': scaleSet },
      },
    });
    const e = er({ name, version: '0.13.1' });
    ers.push({
      ...e,
      metadata: {
        ...e.metadata,
        labels: { ...e.metadata.labels, 'actions.github.com/scale-set-name': scaleSet },
      },
    });
  }
  return facts({ pods, ephemeralRunners: ers });
}
