import { classifyEc2Event, classifyEvent } from '../domain/classify/classify.js';
import type { Trigger } from '../ports/trigger.js';

/**
 * What a trigger concerns. The engine loads from the store only these subjects (and the joins
 * the rules need), reads from the cluster only their objects, and decides for that slice.
 */
export type Subject =
  /** A runner: its pod, EphemeralRunner, node, losses, jobs. */
  | { kind: 'runner'; cluster: string; namespace: string; name: string }
  /** A runner known only by name (a job's `runner_name`): located through the store. */
  | { kind: 'runner-name'; name: string }
  | { kind: 'job'; repo: string; jobId: number }
  | { kind: 'run'; repo: string; runId: number }
  /** A node: its signals and the runner pods on it. */
  | { kind: 'node'; cluster: string; nodeName: string }
  /** An EC2 instance: a node only if the store knows it as one. */
  | { kind: 'instance'; instanceId: string }
  /** A runner namespace as a whole (the sweep, and timers set by it). */
  | { kind: 'namespace'; cluster: string; namespace: string };

const SEP = '|';

export function subjectKey(s: Subject): string {
  switch (s.kind) {
    case 'runner':
      return ['runner', s.cluster, s.namespace, s.name].join(SEP);
    case 'runner-name':
      return ['runner-name', s.name].join(SEP);
    case 'job':
      return ['job', s.repo, s.jobId].join(SEP);
    case 'run':
      return ['run', s.repo, s.runId].join(SEP);
    case 'node':
      return ['node', s.cluster, s.nodeName].join(SEP);
    case 'instance':
      return ['instance', s.instanceId].join(SEP);
    case 'namespace':
      return ['namespace', s.cluster, s.namespace].join(SEP);
  }
}

/** The subject a key names; null for a key this version does not know (it is dropped). */
export function subjectFromKey(key: string): Subject | null {
  const [kind, a, b, c] = key.split(SEP);
  const id = Number(b);
  switch (kind) {
    case 'runner':
      return a && b && c ? { kind, cluster: a, namespace: b, name: c } : null;
    case 'runner-name':
      return a ? { kind, name: a } : null;
    case 'job':
      return a && Number.isSafeInteger(id) ? { kind, repo: a, jobId: id } : null;
    case 'run':
      return a && Number.isSafeInteger(id) ? { kind, repo: a, runId: id } : null;
    case 'node':
      return a && b ? { kind, cluster: a, nodeName: b } : null;
    case 'instance':
      return a ? { kind, instanceId: a } : null;
    case 'namespace':
      return a && b ? { kind, cluster: a, namespace: b } : null;
    default:
      return null;
  }
}

/** The subjects an edge trigger names. Sweeps and wakes find theirs in the store. */
export function subjectsOf(trigger: Trigger): Subject[] {
  switch (trigger.kind) {
    case 'observation': {
      const o = trigger.observation;
      const repo = o.repository.fullName;
      if (o.kind === 'run.completed') return [{ kind: 'run', repo, runId: o.run.runId }];
      return [
        { kind: 'job', repo, jobId: o.job.jobId },
        { kind: 'run', repo, runId: o.job.runId },
        ...(o.job.runnerName ? [{ kind: 'runner-name' as const, name: o.job.runnerName }] : []),
      ];
    }
    case 'cluster': {
      const input = trigger.input;
      if (input.kind === 'ec2') {
        const signal = classifyEc2Event(input.event);
        return signal?.instanceId ? [{ kind: 'instance', instanceId: signal.instanceId }] : [];
      }
      const out: Subject[] = [];
      for (const event of input.events) {
        const c = classifyEvent(event);
        if (c.kind === 'loss')
          out.push({
            kind: 'runner',
            cluster: c.loss.cluster,
            namespace: c.loss.namespace,
            name: c.loss.runnerName,
          });
        else if (c.kind === 'runner-warning')
          out.push({
            kind: 'runner',
            cluster: c.warning.cluster,
            namespace: c.warning.namespace,
            name: c.warning.runnerName,
          });
        else if (c.kind === 'node-signal') {
          const s = c.signal;
          if (s.cluster !== null && s.nodeName !== null)
            out.push({ kind: 'node', cluster: s.cluster, nodeName: s.nodeName });
          else if (s.instanceId !== null) out.push({ kind: 'instance', instanceId: s.instanceId });
        }
      }
      return dedupe(out);
    }
    case 'sweep':
    case 'wake':
      return [];
  }
}

export function dedupe(subjects: Subject[]): Subject[] {
  const seen = new Set<string>();
  return subjects.filter((s) => {
    const k = subjectKey(s);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
