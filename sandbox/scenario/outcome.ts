import {
  cleanupCallBound,
  rescueCallBound,
  type LossShape,
} from '../../functions/domain/policy/rescue-cost.js';
import type { AuditEntry as GithubAudit, Job, Run, Runner } from '../../sim/github/model/types.js';
import type { AuditEntry as KubeAudit, RequestLogEntry } from '../../sim/kube/api/audit.js';
import type { Expectation, Scenario } from './scenario-schema.js';

/** The fixed JSON shape other tools read: add fields freely, rename none. */
export interface ScenarioOutcome {
  scenario: string;
  remediation: boolean;
  passed: boolean;
  jobs: JobOutcome[];
  actions: ActionOutcome[];
  violations: string[];
  failedExpectations: string[];
  /**
   * runner-medic invocations that threw (remediate or reconcile). EventBridge would retry them,
   * but a handler that throws on an input throws on its retries too: any error fails the scenario.
   */
  errors: string[];
  /** Mutating calls per API made by runner-medic. */
  medicCalls: { kubernetes: number; github: number };
  /** runner-medic's mutating calls per verb (`delete`, `rerun-failed-jobs`, …). */
  medicCallsByVerb: Record<string, number>;
  /** runner-medic's audit events (detail-type `Remediation`), in order. */
  auditEvents: AuditEventOutcome[];
  /** The ARC version each cluster models. */
  arcVersions: Record<string, string>;
  /**
   * runner-medic's Kubernetes requests RBAC refused (403), reads included: `cluster METHOD path`.
   * Each one is a call outside the shipped grants that would fail the same way on EKS.
   */
  medicForbidden: string[];
  simulatedSeconds: number;
}

interface AuditEventOutcome {
  at: number;
  /** The action's idempotency key (a check run's external id). */
  key: string | null;
  dryRun: boolean;
  kind: string;
  rule: string | null;
  outcome: string | null;
  namespace: string | null;
}

export interface JobOutcome {
  name: string;
  run: number;
  status: string;
  conclusion: string | null;
  attempts: number;
  lostAt: number | null;
  actionAt: number | null;
  recoveredAt: number | null;
  /** When the job ran again after its loss on a runner that was not lost in turn (in_progress). */
  runningAgainAt: number | null;
}

type Actor = 'runner-medic' | 'arc' | 'kubelet' | 'karpenter' | 'github' | 'user';

interface ActionOutcome {
  at: number;
  by: Actor | string;
  api: 'kubernetes' | 'github';
  verb: string;
  target: string;
  /** The run attempt a GitHub call on a run or job acted on. */
  runAttempt: number | null;
  rule: string | null;
  status: number;
}

/** A fault the runner applied, and the runner pods it hit. */
export interface AppliedFault {
  at: number;
  kind: string;
  cluster: string;
  namespace: string | null;
  scaleSet: string | null;
  pods: string[];
}

export interface OutcomeInput {
  scenario: Scenario;
  remediation: boolean;
  start: number;
  end: number;
  runs: Run[];
  runners: Runner[];
  githubAudit: readonly GithubAudit[];
  kubeAudit: { cluster: string; entries: KubeAudit[] }[];
  /** Every HTTP request per cluster (reads too); absent for twins that do not log them. */
  kubeRequests?: { cluster: string; entries: RequestLogEntry[] }[];
  faults: AppliedFault[];
  remediations: { at: number; detail: Record<string, unknown> }[];
  errors: string[];
  rerunBudget: number;
}

const seconds = (start: number, at: number | null) => (at === null ? null : (at - start) / 1000);

/**
 * A write of runner-medic's to a coordination.k8s.io Lease: leader election's bookkeeping
 * (`runner-medic serve` takes and renews its Lease every retry period), not a change to the
 * cluster under test, so the outcome leaves it out of the actions, the call counts and the
 * invariants. The in-cluster Role grants Leases in serve's own namespace only
 * (infra/kubernetes/in-cluster/rbac-lease.yaml), and a refused request is not a write: a 403 on a
 * Lease still fails the scenario through `medicForbidden`, read from the request log.
 */
export function isLeaderElectionWrite(entry: KubeAudit): boolean {
  return entry.by === 'runner-medic' && entry.resource === 'leases.coordination.k8s.io';
}

export function buildOutcome(outcomeInput: OutcomeInput): ScenarioOutcome {
  const input: OutcomeInput = {
    ...outcomeInput,
    kubeAudit: outcomeInput.kubeAudit.map((c) => ({
      cluster: c.cluster,
      entries: c.entries.filter((e) => !isLeaderElectionWrite(e)),
    })),
  };
  const { start } = input;
  const medicGithub = input.githubAudit.filter((a) => a.by === 'runner-medic');
  const medicKube = input.kubeAudit.flatMap((c) =>
    c.entries.filter((e) => e.by === 'runner-medic').map((e) => ({ cluster: c.cluster, e })),
  );

  const jobs: JobOutcome[] = [];
  input.runs.forEach((run, runIndex) => {
    const names = [...new Set(run.jobs.map((j) => j.name))];
    for (const name of names) {
      const executions = run.jobs.filter((j) => j.name === name);
      const last = executions[executions.length - 1];
      if (!last) continue;
      const lostAt = lossTime(executions, input.runners, input.faults);
      const actionAt =
        lostAt === null
          ? null
          : firstAction(run, executions, lostAt, medicGithub, medicKube, input.faults);
      jobs.push({
        name,
        run: runIndex,
        status: last.status,
        conclusion: last.conclusion,
        attempts: executions.length,
        lostAt: seconds(start, lostAt),
        actionAt: seconds(start, actionAt),
        recoveredAt: seconds(
          start,
          lostAt === null ? null : recoveryTime(run, executions, lostAt, input),
        ),
        runningAgainAt: seconds(
          start,
          lostAt === null ? null : firstHealthyStart(executions, lostAt, input),
        ),
      });
    }
  });

  const rules = ruleIndex(input.remediations);
  const actions: ActionOutcome[] = [
    ...input.githubAudit.map((a) => ({
      at: (a.at - start) / 1000,
      by: a.by,
      api: 'github' as const,
      verb: a.verb,
      target: a.target,
      runAttempt: a.runAttempt ?? null,
      rule: a.by === 'runner-medic' ? (rules.get(`github ${a.verb} ${a.target}`) ?? null) : null,
      status: a.status,
    })),
    ...input.kubeAudit.flatMap((c) =>
      c.entries.map((e) => {
        const target = `${c.cluster}/${e.resource}/${e.namespace ?? ''}/${e.name ?? ''}`;
        return {
          at: (e.at - start) / 1000,
          by: e.by,
          api: 'kubernetes' as const,
          verb: e.subresource ? `${e.verb} ${e.subresource}` : e.verb,
          target,
          runAttempt: null,
          rule: e.by === 'runner-medic' ? (rules.get(`kubernetes ${target}`) ?? null) : null,
          status: e.code,
        };
      }),
    ),
  ].sort((a, b) => a.at - b.at);

  const medicForbidden = (input.kubeRequests ?? []).flatMap((c) =>
    c.entries
      .filter((r) => r.by === 'runner-medic' && r.code === 403)
      .map((r) => `${c.cluster} ${r.method} ${r.path}`),
  );
  const violations = [
    ...medicKube.flatMap(({ cluster, e }) => nonRunnerTouch(cluster, e)),
    ...input.runs.flatMap((run) => [
      ...jobBudgetViolations(run, input.runners, medicGithub, input.rerunBudget),
      ...cleanupViolations(run, input.runners, medicKube, medicGithub),
    ]),
    ...duplicateEffects(medicKube, medicGithub),
    // A call outside the shipped grants fails the same way on EKS.
    ...medicForbidden.map((call) => `runner-medic refused by RBAC (403): ${call}`),
  ];
  const medicActions = actions.filter((a) => a.by === 'runner-medic');
  const auditEvents = input.remediations.map(({ at, detail }) => ({
    at: (at - start) / 1000,
    key: typeof detail.key === 'string' ? detail.key : null,
    dryRun: detail.dryRun === true,
    kind: String(detail.action ?? ''),
    rule: typeof detail.rule === 'string' ? detail.rule : null,
    outcome: typeof detail.outcome === 'string' ? detail.outcome : null,
    namespace: typeof detail.namespace === 'string' ? detail.namespace : null,
  }));
  const medicCallsByVerb: Record<string, number> = {};
  for (const a of medicActions) medicCallsByVerb[a.verb] = (medicCallsByVerb[a.verb] ?? 0) + 1;
  const expectation = input.remediation
    ? input.scenario.expect.remediation
    : input.scenario.expect.baseline;
  const failedExpectations = [
    ...checkExpectation(expectation, jobs, medicActions),
    ...checkCalls(expectation, medicCallsByVerb),
    ...checkAuditEvents(expectation, auditEvents),
    ...checkNamespaces(expectation, medicKube),
    ...checkKubeReads(expectation, input.kubeRequests),
  ];
  return {
    scenario: input.scenario.name,
    remediation: input.remediation,
    passed: violations.length === 0 && failedExpectations.length === 0 && input.errors.length === 0,
    jobs,
    actions,
    violations,
    failedExpectations,
    errors: input.errors,
    medicCalls: { kubernetes: medicKube.length, github: medicGithub.length },
    medicCallsByVerb,
    auditEvents,
    arcVersions: Object.fromEntries(input.scenario.clusters.map((c) => [c.name, c.arcVersion])),
    medicForbidden,
    simulatedSeconds: (input.end - start) / 1000,
  };
}

/** When the job's runner was lost: its runner stopped abnormally, or a fault hit its scale set while it waited. */
function lossTime(executions: Job[], runners: Runner[], faults: AppliedFault[]): number | null {
  const times: number[] = [];
  for (const job of executions) {
    const runner = runners.find((r) => r.jobId === job.id);
    if (
      runner?.stoppedAt != null &&
      (runner.stopped === 'sigterm' || runner.stopped === 'killed')
    ) {
      times.push(runner.stoppedAt);
    }
  }
  const first = executions[0];
  if (first) {
    const pickedUp =
      executions.find((j) => j.runnerName !== null)?.startedAt ?? Number.POSITIVE_INFINITY;
    for (const fault of faults) {
      const hitsItsSet = fault.scaleSet !== null && first.labels.includes(fault.scaleSet);
      if (
        hitsItsSet &&
        fault.pods.length > 0 &&
        fault.at >= first.createdAt &&
        fault.at < pickedUp
      ) {
        times.push(fault.at);
      }
    }
  }
  return times.length > 0 ? Math.min(...times) : null;
}

function firstAction(
  run: Run,
  executions: Job[],
  lostAt: number,
  github: GithubAudit[],
  kube: { cluster: string; e: KubeAudit }[],
  faults: AppliedFault[],
): number | null {
  const ids = new Set(executions.map((j) => String(j.id)));
  const namespaces = new Set(faults.map((f) => f.namespace).filter((n): n is string => n !== null));
  const times = [
    ...github
      .filter(
        (a) =>
          a.at >= lostAt &&
          (a.target.endsWith(`/runs/${run.id}`) || ids.has(a.target.split('/').pop() ?? '')),
      )
      .map((a) => a.at),
    ...kube
      .filter(({ e }) => e.at >= lostAt && namespaces.has(e.namespace ?? ''))
      .map(({ e }) => e.at),
  ];
  return times.length > 0 ? Math.min(...times) : null;
}

/** When the job first started after its loss on a runner that was not lost in turn. */
function firstHealthyStart(executions: Job[], lostAt: number, input: OutcomeInput): number | null {
  const starts = executions
    .filter((j) => j.runnerName !== null && j.startedAt > lostAt)
    .filter((j) => {
      const runner = input.runners.find((r) => r.jobId === j.id);
      return !(runner?.stopped === 'sigterm' || runner?.stopped === 'killed');
    })
    .map((j) => j.startedAt);
  return starts.length > 0 ? Math.min(...starts) : null;
}

/** When the job ran again on a healthy runner, or a re-run of its run was accepted. */
function recoveryTime(
  run: Run,
  executions: Job[],
  lostAt: number,
  input: OutcomeInput,
): number | null {
  const healthyStart = firstHealthyStart(executions, lostAt, input);
  const healthyStarts = healthyStart === null ? [] : [healthyStart];
  const reruns = input.githubAudit
    .filter(
      (a) =>
        a.at >= lostAt &&
        a.status === 201 &&
        a.verb.startsWith('rerun') &&
        (a.target.endsWith(`/runs/${run.id}`) ||
          executions.some((j) => a.target.endsWith(`/jobs/${j.id}`))),
    )
    .map((a) => a.at);
  const times = [...healthyStarts, ...reruns];
  return times.length > 0 ? Math.min(...times) : null;
}

/** The GitHub twin's audit verb for each action kind that calls GitHub. */
const GITHUB_VERB: Record<string, string> = {
  'cancel-run': 'cancel',
  'force-cancel-run': 'force-cancel',
  'delete-runner-registration': 'delete-runner',
};

function ruleIndex(remediations: { detail: Record<string, unknown> }[]): Map<string, string> {
  const index = new Map<string, string>();
  for (const { detail } of remediations) {
    const target = detail.target as Record<string, unknown> | undefined;
    const rule = String(detail.rule ?? '');
    if (!target) continue;
    const verb = GITHUB_VERB[String(target.kind)] ?? String(target.kind);
    if (typeof target.runId === 'number')
      index.set(`github ${verb} repos/${String(target.repo)}/actions/runs/${target.runId}`, rule);
    if (typeof target.jobId === 'number')
      index.set(`github ${verb} repos/${String(target.repo)}/actions/jobs/${target.jobId}`, rule);
    if (typeof target.runnerId === 'number') {
      const owner = target.owner as { org?: string; repo?: string } | undefined;
      const path = owner?.org ? `orgs/${owner.org}` : `repos/${owner?.repo ?? ''}`;
      index.set(`github ${verb} ${path}/actions/runners/${target.runnerId}`, rule);
    }
    if (typeof target.cluster === 'string' && typeof target.name === 'string') {
      const resource =
        target.kind === 'delete-pod' ? 'pods' : 'ephemeralrunners.actions.github.com';
      index.set(
        `kubernetes ${target.cluster}/${resource}/${String(target.namespace)}/${target.name}`,
        rule,
      );
    }
  }
  return index;
}

function nonRunnerTouch(cluster: string, e: KubeAudit): string[] {
  const owners = e.ownerReferences.map((o) => o.kind);
  const isRunnerPod =
    e.resource === 'pods' &&
    e.labels['actions-ephemeral-runner'] === 'True' &&
    owners.includes('EphemeralRunner');
  const isRunner =
    e.resource === 'ephemeralrunners.actions.github.com' &&
    Boolean(e.labels['actions.github.com/scale-set-name']) &&
    owners.includes('EphemeralRunnerSet');
  return isRunnerPod || isRunner
    ? []
    : [
        `runner-medic ${e.verb} ${cluster}/${e.resource}/${e.namespace ?? ''}/${e.name ?? ''}: not an ARC runner`,
      ];
}

const isEffect = (status: number) => status >= 200 && status < 300;

function lossShape(job: Job, runners: Runner[]): LossShape | null {
  const stopped = runners.find((r) => r.jobId === job.id)?.stopped;
  return stopped === 'killed' ? 'hard-kill' : stopped === 'sigterm' ? 'graceful' : null;
}

/**
 * Each job of a run within its re-run budget, and within budget × one rescue's cost in
 * job-level calls (functions/domain/policy/rescue-cost.ts). A call on the run counts for the jobs
 * lost on the attempt it acted on (every job of that attempt when none was lost); a call on a
 * job counts for that job. Only effects count: a refused call changed nothing.
 */
function jobBudgetViolations(
  run: Run,
  runners: Runner[],
  github: readonly GithubAudit[],
  budget: number,
): string[] {
  const lostOn = (attempt: number) =>
    run.jobs.filter((j) => j.runAttempt === attempt && lossShape(j, runners) !== null);
  const forJobs = (a: GithubAudit): Job[] => {
    // Run and job ids are unique across repositories, as GitHub's are.
    const job = run.jobs.find((j) => a.target.endsWith(`/actions/jobs/${j.id}`));
    if (job) return [job];
    if (!a.target.endsWith(`/actions/runs/${run.id}`)) return [];
    const attempts =
      a.runAttempt === undefined ? [...new Set(run.jobs.map((j) => j.runAttempt))] : [a.runAttempt];
    return attempts.flatMap((n) => {
      const lost = lostOn(n);
      return lost.length > 0 ? lost : run.jobs.filter((j) => j.runAttempt === n);
    });
  };
  const calls = new Map<string, GithubAudit[]>();
  for (const a of github.filter((x) => isEffect(x.status)))
    for (const name of new Set(forJobs(a).map((j) => j.name)))
      calls.set(name, [...(calls.get(name) ?? []), a]);
  const out: string[] = [];
  for (const [name, mine] of calls) {
    const shapes = run.jobs
      .filter((j) => j.name === name)
      .map((j) => lossShape(j, runners))
      .filter((s): s is LossShape => s !== null);
    const reruns = mine.filter((a) => a.verb.startsWith('rerun')).length;
    if (reruns > budget)
      out.push(
        `run ${run.id} job ${name}: ${reruns} re-runs by runner-medic, over the budget of ${budget}`,
      );
    const bound = rescueCallBound(budget, shapes);
    if (mine.length > bound)
      out.push(
        `run ${run.id} job ${name}: ${mine.length} mutating calls by runner-medic (${mine.map((a) => `${a.verb}#${a.runAttempt ?? '?'}`).join(', ')}), over budget × rescue cost = ${bound} (${shapes.join(', ') || 'not lost'})`,
      );
  }
  return out;
}

/**
 * The clean-up of each job's lost runners (Kubernetes calls on their objects, deleting their
 * registrations) within what a lost runner may cost (functions/domain/policy/rescue-cost.ts).
 */
function cleanupViolations(
  run: Run,
  runners: Runner[],
  kube: { cluster: string; e: KubeAudit }[],
  github: readonly GithubAudit[],
): string[] {
  const out: string[] = [];
  for (const name of new Set(run.jobs.map((j) => j.name))) {
    const ids = new Set(run.jobs.filter((j) => j.name === name).map((j) => j.id));
    const lost = runners.filter(
      (r) =>
        r.jobId !== null && ids.has(r.jobId) && (r.stopped === 'killed' || r.stopped === 'sigterm'),
    );
    const names = new Set(lost.map((r) => r.name));
    const calls = [
      ...kube
        .filter(({ e }) => isEffect(e.code) && names.has(e.name ?? ''))
        .map(({ e }) => `${e.verb} ${e.resource}/${e.name ?? ''}`),
      ...github
        .filter(
          (a) =>
            isEffect(a.status) &&
            a.verb === 'delete-runner' &&
            lost.some((r) => a.target.endsWith(`/actions/runners/${r.id}`)),
        )
        .map((a) => `${a.verb} ${a.target}`),
    ];
    const bound = cleanupCallBound(lost.length);
    if (calls.length > bound)
      out.push(
        `run ${run.id} job ${name}: ${calls.length} clean-up calls on its ${lost.length} lost runners (${calls.join(', ')}), over ${bound}`,
      );
  }
  return out;
}

/** A Kubernetes object changed twice, or a GitHub call repeated on the same run attempt. */
function duplicateEffects(
  kube: { cluster: string; e: KubeAudit }[],
  github: GithubAudit[],
): string[] {
  const seen = new Map<string, number>();
  const out: string[] = [];
  const note = (key: string) => {
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (n === 2) out.push(`duplicate effect: ${key}`);
  };
  for (const { cluster, e } of kube) {
    if (isEffect(e.code))
      note(`${e.verb} ${cluster}/${e.resource}/${e.namespace ?? ''}/${e.name ?? ''}`);
  }
  for (const a of github) {
    if (isEffect(a.status) && !a.verb.startsWith('rerun'))
      note(`${a.verb} ${a.target}${a.runAttempt === undefined ? '' : ` attempt ${a.runAttempt}`}`);
  }
  return out;
}

function checkExpectation(
  expect: Expectation,
  jobs: JobOutcome[],
  medic: ActionOutcome[],
): string[] {
  const out: string[] = [];
  for (const want of expect.jobs) {
    const matching = jobs.filter(
      (j) => j.name === want.name && (want.run === undefined || j.run === want.run),
    );
    const label =
      want.run === undefined ? `job ${want.name}` : `job ${want.name} of run ${want.run}`;
    if (matching.length === 0) out.push(`${label}: not found`);
    for (const job of matching) {
      if (want.lost !== undefined && (job.lostAt !== null) !== want.lost) {
        out.push(
          `${label}: ${job.lostAt === null ? 'not lost' : 'lost'}, expected ${want.lost ? 'lost' : 'not lost'}`,
        );
      }
      if (want.recovered !== undefined && (job.recoveredAt !== null) !== want.recovered) {
        out.push(
          `${label}: ${job.recoveredAt === null ? 'not recovered' : 'recovered'}, expected ${want.recovered ? 'recovered' : 'not recovered'}`,
        );
      }
      if (want.maxActionSeconds !== undefined) {
        const took =
          job.actionAt !== null && job.lostAt !== null ? job.actionAt - job.lostAt : null;
        if (took === null || took > want.maxActionSeconds) {
          out.push(
            `${label}: first action ${took ?? 'never'} s after the loss, expected at most ${want.maxActionSeconds} s`,
          );
        }
      }
      if (want.status !== undefined && job.status !== want.status) {
        out.push(`${label}: status ${job.status}, expected ${want.status}`);
      }
      if (want.conclusion !== undefined && job.conclusion !== want.conclusion) {
        out.push(
          `${label}: conclusion ${String(job.conclusion)}, expected ${String(want.conclusion)}`,
        );
      }
      if (want.attempts !== undefined && job.attempts !== want.attempts) {
        out.push(`${label}: ${job.attempts} attempts, expected ${want.attempts}`);
      }
      if (want.maxRecoverySeconds !== undefined) {
        const took =
          job.recoveredAt !== null && job.lostAt !== null ? job.recoveredAt - job.lostAt : null;
        if (took === null || took > want.maxRecoverySeconds) {
          out.push(
            `${label}: recovered in ${took ?? 'never'} s, expected at most ${want.maxRecoverySeconds} s`,
          );
        }
      }
    }
  }
  if (expect.maxActions !== undefined && medic.length > expect.maxActions) {
    out.push(
      `runner-medic made ${medic.length} mutating calls, expected at most ${expect.maxActions}`,
    );
  }
  for (const verb of expect.actionVerbs) {
    if (!medic.some((a) => a.verb === verb)) out.push(`no runner-medic action ${verb}`);
  }
  return out;
}

function checkKubeReads(expect: Expectation, requests: OutcomeInput['kubeRequests']): string[] {
  if (expect.maxKubeReads === undefined) return [];
  if (!requests) return ['maxKubeReads: this cluster twin logs no requests'];
  const reads = requests
    .flatMap((c) => c.entries)
    .filter((r) => r.by === 'runner-medic' && r.method === 'GET').length;
  return reads > expect.maxKubeReads
    ? [`runner-medic made ${reads} Kubernetes reads, expected at most ${expect.maxKubeReads}`]
    : [];
}

function checkCalls(expect: Expectation, byVerb: Record<string, number>): string[] {
  return Object.entries(expect.calls)
    .filter(([verb, count]) => (byVerb[verb] ?? 0) !== count)
    .map(
      ([verb, count]) =>
        `runner-medic made ${byVerb[verb] ?? 0} ${verb} calls, expected exactly ${count}`,
    );
}

function checkAuditEvents(expect: Expectation, events: AuditEventOutcome[]): string[] {
  const out: string[] = [];
  for (const want of expect.auditEvents) {
    const matching = events.filter(
      (e) =>
        e.kind === want.kind &&
        (want.rule === undefined || e.rule === want.rule) &&
        (want.outcome === undefined || e.outcome === want.outcome),
    );
    const what = [want.kind, want.rule, want.outcome].filter(Boolean).join(' ');
    if (want.count !== undefined && matching.length !== want.count)
      out.push(`${matching.length} audit events ${what}, expected exactly ${want.count}`);
    else if (want.count === undefined && matching.length === 0) out.push(`no audit event ${what}`);
  }
  return out;
}

function checkNamespaces(expect: Expectation, kube: { cluster: string; e: KubeAudit }[]): string[] {
  return expect.untouchedNamespaces.flatMap((ns) =>
    kube
      .filter(({ e }) => e.namespace === ns)
      .map(
        ({ cluster, e }) =>
          `runner-medic ${e.verb} ${cluster}/${e.resource}/${ns}/${e.name ?? ''}, in a namespace it must not touch`,
      ),
  );
}
