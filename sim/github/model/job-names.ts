import type { JobSpec, WorkflowSpec } from './types.js';

export interface ExpandedJob {
  name: string;
  spec: JobSpec;
  matrix: Record<string, string | number> | undefined;
}

/** Expands matrix jobs into one job per combination, named as GitHub names them: `build (a, b)`. */
export function expandJobs(workflow: WorkflowSpec): ExpandedJob[] {
  const out: ExpandedJob[] = [];
  for (const spec of workflow.jobs) {
    if (!spec.matrix) {
      out.push({ name: spec.name, spec, matrix: undefined });
      continue;
    }
    for (const combo of combinations(spec.matrix)) {
      const values = Object.values(combo).join(', ');
      out.push({ name: `${spec.name} (${values})`, spec, matrix: combo });
    }
  }
  return out;
}

function combinations(
  matrix: Record<string, (string | number)[]>,
): Record<string, string | number>[] {
  let acc: Record<string, string | number>[] = [{}];
  for (const [key, values] of Object.entries(matrix)) {
    acc = acc.flatMap((partial) => values.map((value) => ({ ...partial, [key]: value })));
  }
  return acc;
}

/** Names of every job that (transitively) needs one of `names`, plus `names` themselves. */
export function withDependents(workflow: WorkflowSpec, names: Iterable<string>): Set<string> {
  const expanded = expandJobs(workflow);
  const chosen = new Set(names);
  const specOf = new Map(expanded.map((job) => [job.name, job.spec.name]));
  let grew = true;
  while (grew) {
    grew = false;
    const chosenSpecs = new Set([...chosen].map((name) => specOf.get(name)));
    for (const job of expanded) {
      if (chosen.has(job.name)) continue;
      if ((job.spec.needs ?? []).some((need) => chosenSpecs.has(need))) {
        chosen.add(job.name);
        grew = true;
      }
    }
  }
  return new Set(expanded.map((job) => job.name).filter((name) => chosen.has(name)));
}

export function matchesMatrix(
  combo: Record<string, string | number> | undefined,
  wanted: Record<string, string | number> | undefined,
): boolean {
  if (!wanted) return true;
  if (!combo) return false;
  return Object.entries(wanted).every(([key, value]) => combo[key] === value);
}

/** Throws a readable error for duplicate job names, unknown `needs`, cycles and empty matrices. */
export function validateWorkflow(workflow: WorkflowSpec): void {
  const where = `workflow "${workflow.name}"`;
  const names = new Set<string>();
  for (const job of workflow.jobs) {
    if (names.has(job.name)) throw new Error(`${where}: job "${job.name}" is defined twice`);
    names.add(job.name);
    for (const [key, values] of Object.entries(job.matrix ?? {}))
      if (values.length === 0)
        throw new Error(`${where}: job "${job.name}" has an empty matrix "${key}"`);
  }
  for (const job of workflow.jobs)
    for (const need of job.needs ?? [])
      if (!names.has(need))
        throw new Error(`${where}: job "${job.name}" needs unknown job "${need}"`);
  const done = new Set<string>();
  const visiting = new Set<string>();
  const byName = new Map(workflow.jobs.map((job) => [job.name, job]));
  const visit = (name: string, path: string[]): void => {
    if (done.has(name)) return;
    if (visiting.has(name))
      throw new Error(`${where}: needs form a cycle: ${[...path, name].join(' -> ')}`);
    visiting.add(name);
    for (const need of byName.get(name)?.needs ?? []) visit(need, [...path, name]);
    visiting.delete(name);
    done.add(name);
  };
  for (const job of workflow.jobs) visit(job.name, []);
}
