import type { Pod } from '../model/cluster-facts.js';
import type { RunnerView } from '../correlate/correlate.js';
import type { ActionRecord, Facts, JobRecord } from '../model/facts.js';
import { idempotencyKey } from '../model/idempotency-key.js';
import { isoTime } from '../model/iso-time.js';
import { describeCause, lossKindSchema, NODE_DOWN_KINDS, type LossKind } from '../model/loss.js';
import { ms } from '../model/time.js';
import { matchesErFields } from '../correlate/runner-of-job.js';

/** A busy runner the live objects show dead with its job, since when, and what shows it. */
export interface RunnerDeath {
  /** When it died at the latest (epoch ms); 0 when the objects say so but carry no time. */
  since: number;
  evidence: string;
  /**
   * Whether the runner may have been stopped gracefully, so that GitHub is concluding its job by
   * itself (within ~26 s of the SIGTERM). False for a NotReady node: the kubelet stopped
   * reporting at least the node monitor grace period (40 s) earlier.
   */
  mayBeGraceful: boolean;
}

/** runner-medic's own delete of this runner's objects (of `kinds`), carried out: the earliest. */
function deletedByUs(v: RunnerView, facts: Facts, kinds: readonly string[]): ActionRecord | null {
  const prefixes = kinds.map((kind) => `${idempotencyKey(kind, v.cluster, v.namespace, v.name)}:`);
  return (
    facts.actions
      .filter(
        (a) =>
          (a.outcome === 'succeeded' || a.outcome === 'claimed') &&
          prefixes.some((p) => a.key.startsWith(p)),
      )
      .sort((a, b) => a.claimedAt - b.claimedAt)[0] ?? null
  );
}

/** When the runner took its one job: GitHub's start of its job, else its job fields' first sight. */
function jobTakenAt(v: RunnerView): number | null {
  const starts = v.jobs
    .filter((j) => j.job.runnerName === v.name)
    .map((j) => ms(j.job.startedAt))
    .filter((t): t is number => t !== null);
  return starts.length > 0 ? Math.min(...starts) : v.jobSeenAt;
}

/** What is on record of a runner's end since `taken`: when, who says so, and whether it may be graceful. */
interface RecordedEnd {
  at: number;
  what: string;
  mayBeGraceful: boolean;
}

/**
 * The kill on record for a runner since it took its job: a stored loss (an exporter event, or its
 * pod seen killed before ARC deleted it), dated by what recorded it; else GitHub's own record of
 * it, its registration (by runner id) offline while still busy with the job (ARC 0.15 retries its
 * removal in the background while GitHub answers JobStillRunning, #4664).
 *
 * The registration dates nothing: GitHub's runner object has no time, so `offlineSince` is the
 * sweep that first read it offline, up to a sweep after the stop. Counting the grace from that
 * read would add it to the sweep's delay (a kill just after a sweep: 60 s + 30 s + the cancel's
 * 11.5 s). So that end is decided at sight (not graceful): the runner was seen neither stopping
 * (no read of its pod ending) nor told of (no Event), and the grace would spare at most a cancel
 * of a graceful stop that nothing announced, whose job GitHub concludes 15–26 s after the SIGTERM
 * (GAG, docs/design/04-operational-flows.md) and rule 3 re-runs either way.
 */
function recordedEnd(v: RunnerView, facts: Facts, taken: number): RecordedEnd | null {
  const kill = v.losses.find((l) => l.at !== null && l.at >= taken && KILLS.has(l.cause.kind));
  if (kill?.at != null)
    return {
      at: kill.at,
      what: `${describeCause(kill.cause)} at ${isoTime(kill.at)} (${kill.signal.source}: ${kill.signal.detail})`,
      mayBeGraceful: true,
    };
  const reg = facts.registrations.find((r) => r.id === v.runnerId && r.name === v.name);
  if (reg?.status !== 'offline' || !reg.busy || reg.offlineSince === null) return null;
  if (reg.offlineSince < taken) return null;
  return {
    at: reg.offlineSince,
    what: `GitHub runner ${reg.id} offline and busy since ${isoTime(reg.offlineSince)}`,
    mayBeGraceful: false,
  };
}

/**
 * A busy runner whose EphemeralRunner and pod are both gone, looked up in this slice, after its
 * end was put on record (recordedEnd) since it took its job. ARC ≥ 0.15 deletes both within a
 * second of a kill (actions-runner-controller ephemeralrunner_controller.go
 * `deleteEphemeralRunnerOrPod`, #4664), so what is left is the record. Absence alone is no
 * evidence: the end must be on record, and the runner known (its job fields cached) to have
 * taken its job.
 */
function goneAfterKill(v: RunnerView, facts: Facts): RunnerDeath | null {
  const taken = jobTakenAt(v);
  if (v.jobSeenAt === null || taken === null) return null;
  const end = recordedEnd(v, facts, taken);
  if (!end) return null;
  const looked = facts.listings.find(
    (l) => l.cluster === v.cluster && l.namespace === v.namespace && l.at >= end.at,
  );
  if (!looked) return null;
  return {
    since: end.at,
    evidence: `EphemeralRunner and pod ${v.name} gone at ${isoTime(looked.at)}; before that, ${end.what}, after it took its job`,
    mayBeGraceful: end.mayBeGraceful,
  };
}

/**
 * Losses that end the runner's process. Not: a runner that outlived its job, a pod merely missing,
 * a node that stopped reporting (its runners may still run), an EphemeralRunner whose pod was
 * refused.
 */
const NOT_KILLS: readonly LossKind[] = [
  'runner-stuck',
  'pod-not-found',
  'node-not-ready',
  'runner-failed',
];
const KILLS = new Set(lossKindSchema.options.filter((k) => !NOT_KILLS.includes(k)));

const TERMINAL = new Set(['Failed', 'Succeeded']);
const RUNNER_CONTAINER = 'runner';

/** When the pod stopped being Ready (the kubelet's own record), or null. */
function notReadySince(pod: Pod): number | null {
  const ready = pod.conditions.find((c) => c.type === 'Ready');
  return ready && ready.status !== 'True' ? ready.lastTransitionTime : null;
}

function podProcessEnded(pod: Pod): string | null {
  if (pod.phase && TERMINAL.has(pod.phase)) return `pod ${pod.metadata.name} is ${pod.phase}`;
  const runner = pod.containerStatuses.find((c) => c.name === RUNNER_CONTAINER);
  if (runner?.terminated)
    return `runner container of pod ${pod.metadata.name} terminated (${runner.terminated.reason ?? 'no reason'}, exit ${runner.terminated.exitCode})`;
  return null;
}

/** Whether this runner is the one that took the job (by name, or by its EphemeralRunner's job fields). */
export function ranJob(v: RunnerView, j: JobRecord): boolean {
  if (j.job.runnerName !== null) return j.job.runnerName === v.name;
  return v.jobFields !== null && matchesErFields(j, v.name, v.jobFields);
}

/**
 * Whether the live objects show that the runner of an in-progress job died with it. An
 * ephemeral runner runs one job on one JIT config, so ARC never brings a busy runner back: once
 * its process is gone the job can only end by GitHub's lost-runner lock. A level check, on the
 * objects read in this slice, never on an event alone:
 * - its EphemeralRunner is `Failed`;
 * - its pod is terminal, or its runner container has terminated;
 * - its pod is gone (looked up and not found) under its EphemeralRunner;
 * - both its pod and EphemeralRunner are gone (looked up now) after its end was put on record
 *   since it took its job: a stored kill, or GitHub's registration offline while busy (ARC 0.15
 *   deletes a killed runner's objects within a second, goneAfterKill);
 * - its pod was created after the runner took its job: the pod that ran the job is gone and ARC
 *   re-created it with the spent JIT config (actions-runner-controller#4588);
 * - its node is gone or NotReady (the kubelet stopped reporting; its processes are presumed gone);
 * - runner-medic itself deleted its EphemeralRunner or pod after a loss (rule 1), and neither is
 *   back; or it force-deleted the pod, and only the EphemeralRunner is left, being deleted.
 */
export function deathEvidence(v: RunnerView, facts: Facts): RunnerDeath[] {
  const { pod, er } = v;
  const lossAt = v.lostAt ?? 0;
  const found: RunnerDeath[] = [];
  if (er?.phase === 'Failed')
    found.push({
      since: lossAt,
      evidence: `EphemeralRunner ${v.name} is Failed (${er.reason ?? 'no reason'})`,
      mayBeGraceful: true,
    });
  if (pod) {
    const ended = podProcessEnded(pod);
    if (ended)
      found.push({ since: notReadySince(pod) ?? lossAt, evidence: ended, mayBeGraceful: true });
    const created = pod.metadata.creationTimestamp;
    if (v.jobSeenAt !== null && created !== null && created > v.jobSeenAt)
      found.push({
        since: created,
        evidence: `pod ${pod.metadata.name} was created at ${isoTime(created)}, after its runner took its job (seen ${isoTime(v.jobSeenAt)}): the pod that ran the job is gone and the new one has a spent JIT config (actions-runner-controller#4588)`,
        mayBeGraceful: true,
      });
  } else if (v.podMissingSince !== null) {
    found.push({
      since: v.podMissingSince,
      evidence: `pod ${v.name} not found since ${isoTime(v.podMissingSince)}`,
      mayBeGraceful: true,
    });
  }
  const gone = !pod && !er ? goneAfterKill(v, facts) : null;
  if (gone) found.push(gone);
  // Neither object back: the earliest of our deletes. The pod gone under an EphemeralRunner being
  // deleted (ARC ≤ 0.14 keeps a busy runner's deleting while GitHub answers JobStillRunning, and
  // never gives it a pod again): our force delete of the pod (grace 0, its only kind) is its end;
  // after our delete of the EphemeralRunner alone the pod may have stopped gracefully much later.
  const ours = pod
    ? null
    : !er
      ? deletedByUs(v, facts, ['delete-ephemeral-runner', 'delete-pod'])
      : er.metadata.deletionTimestamp !== null
        ? deletedByUs(v, facts, ['delete-pod'])
        : null;
  if (ours)
    found.push({
      since: ours.claimedAt,
      evidence: er
        ? `runner-medic force-deleted the pod of ${v.name} at ${isoTime(ours.claimedAt)} (${ours.rule}), and its EphemeralRunner is being deleted`
        : `runner-medic deleted ${ours.kind === 'delete-pod' ? 'the pod' : 'the EphemeralRunner'} of ${v.name} at ${isoTime(ours.claimedAt)} (${ours.rule}), and neither is back`,
      mayBeGraceful: true,
    });
  for (const s of v.nodeSignals.filter((x) => NODE_DOWN_KINDS.includes(x.kind)))
    found.push({
      since: s.at ?? 0,
      evidence: `node ${v.nodeName ?? '?'} ${s.kind}: ${s.signal.detail}`,
      mayBeGraceful: s.kind !== 'node-not-ready',
    });
  const nodeGone = v.node?.deletionTimestamp ?? null;
  if (nodeGone !== null)
    found.push({
      since: nodeGone,
      evidence: `node ${v.nodeName ?? '?'} is being deleted`,
      mayBeGraceful: true,
    });
  return found;
}
