import { buildOutcome } from '../../../sandbox/scenario/outcome.js';
import type { OutcomeInput } from '../../../sandbox/scenario/outcome.js';
import { parseScenario } from '../../../sandbox/scenario/scenario-schema.js';
import type { AuditEntry, Run, Runner } from '../../../sim/github/model/types.js';

const START = 1_000_000;
const RUN = 'repos/acme/app/actions/runs/1';

const scenario = parseScenario(`
name: killed-every-attempt
clusters:
  - name: c1
    arcVersion: '0.13'
    nodes: [{ name: n1, instanceId: i-0abc }]
    scaleSets: [{ name: arc, owner: acme }]
repos:
  - name: acme/app
    workflows: [{ name: ci, jobs: [{ name: e2e, runsOn: arc }, { name: lint, runsOn: arc }] }]
runs: [{ at: 0, repo: acme/app, workflow: ci }]
`);

/** Run 1: e2e lost on each of `attempts` (its runner stopped as `stopped`); lint ran once, fine. */
function world(attempts: number, stopped: 'killed' | 'sigterm') {
  const job = (id: number, name: string, attempt: number) => ({
    id,
    runId: 1,
    runAttempt: attempt,
    name,
    labels: ['arc'],
    status: 'completed',
    conclusion: 'failure',
    createdAt: START,
    startedAt: START + 100_000 * attempt,
    runnerName: `r${id}`,
  });
  const e2e = Array.from({ length: attempts }, (_, i) => job(10 + i, 'e2e', i + 1));
  const runs = [
    { id: 1, attempt: attempts, repo: { fullName: 'acme/app' }, jobs: [job(1, 'lint', 1), ...e2e] },
  ] as unknown as Run[];
  const runners = [
    { name: 'r1', jobId: 1, stopped: 'completed', stoppedAt: START + 50_000 },
    ...e2e.map((j) => ({
      name: j.runnerName,
      jobId: j.id,
      stopped,
      stoppedAt: j.startedAt + 30_000,
    })),
  ] as unknown as Runner[];
  return { runs, runners };
}

const call = (verb: string, runAttempt: number, status = 202, target = RUN): AuditEntry => ({
  at: START + 100_000 * runAttempt + 60_000,
  by: 'runner-medic',
  api: 'github',
  verb,
  target,
  status,
  runAttempt,
});

/** cancel, force-cancel and re-run of each attempt given. */
const rescues = (...attempts: number[]) =>
  attempts.flatMap((n) => [
    call('cancel', n),
    call('force-cancel', n),
    call('rerun-failed-jobs', n, 201),
  ]);

type KubeEntry = OutcomeInput['kubeAudit'][number]['entries'][number];

/** runner-medic's call on one of a runner's objects, as the cluster twin audits it. */
const kubeCall = (verb: 'delete' | 'patch', object: 'pod' | 'er', runner: string): KubeEntry => ({
  at: START + 200_000,
  by: 'runner-medic',
  api: 'kubernetes',
  verb,
  resource: object === 'pod' ? 'pods' : 'ephemeralrunners.actions.github.com',
  namespace: 'arc-runners',
  name: runner,
  labels:
    object === 'pod'
      ? { 'actions-ephemeral-runner': 'True' }
      : { 'actions.github.com/scale-set-name': 'arc' },
  ownerReferences: [
    {
      apiVersion: 'actions.github.com/v1alpha1',
      kind: object === 'pod' ? 'EphemeralRunner' : 'EphemeralRunnerSet',
      name: 'x',
      uid: 'u',
    },
  ],
  code: 200,
});

function outcome(githubAudit: AuditEntry[], w = world(3, 'killed'), kube: KubeEntry[] = []) {
  const input: OutcomeInput = {
    scenario,
    remediation: true,
    start: START,
    end: START + 3_600_000,
    ...w,
    githubAudit,
    kubeAudit: [{ cluster: 'c1', entries: kube }],
    faults: [],
    remediations: [],
    errors: [],
    rerunBudget: 2,
  };
  return buildOutcome(input);
}

describe('the same effect twice: an effect is (verb, path, attempt)', () => {
  it('takes a cancel of attempt 1 and one of attempt 2 for two effects, not a duplicate', () => {
    const o = outcome(rescues(1, 2));
    expect(o.violations).toEqual([]);
    expect(o.actions.map((a) => a.runAttempt)).toEqual([1, 1, 1, 2, 2, 2]);
  });

  it('reports the same attempt cancelled twice', () => {
    const o = outcome([...rescues(1), call('cancel', 1), call('force-cancel', 1)]);
    expect(o.violations).toEqual([
      `duplicate effect: cancel ${RUN} attempt 1`,
      `duplicate effect: force-cancel ${RUN} attempt 1`,
    ]);
  });

  it('does not count a refused call as an effect', () => {
    expect(outcome([call('cancel', 1, 500), ...rescues(1)]).violations).toEqual([]);
  });
});

describe('the mutating calls per job: within budget × one rescue cost', () => {
  it('holds a job killed on all three attempts to two rescues of three calls', () => {
    expect(outcome(rescues(1, 2)).passed).toBe(true);
  });

  it('detects the last attempt cancelled when no re-run can follow (8 calls, budget 2 × 3)', () => {
    const o = outcome([...rescues(1, 2), call('cancel', 3), call('force-cancel', 3)]);
    expect(o.passed).toBe(false);
    expect(o.violations).toEqual([
      'run 1 job e2e: 8 mutating calls by runner-medic (cancel#1, force-cancel#1, rerun-failed-jobs#1, cancel#2, force-cancel#2, rerun-failed-jobs#2, cancel#3, force-cancel#3), over budget × rescue cost = 6 (hard-kill, hard-kill, hard-kill)',
    ]);
  });

  it('holds a graceful loss to its re-run: a cancel on top is over the bound', () => {
    const graceful = world(3, 'sigterm');
    const reruns = [call('rerun-failed-jobs', 1, 201), call('rerun-failed-jobs', 2, 201)];
    expect(outcome(reruns, graceful).violations).toEqual([]);
    expect(outcome([call('cancel', 2), ...reruns], graceful).violations).toEqual([
      'run 1 job e2e: 3 mutating calls by runner-medic (cancel#2, rerun-failed-jobs#1, rerun-failed-jobs#2), over budget × rescue cost = 2 (graceful, graceful, graceful)',
    ]);
  });

  it('counts re-runs of one job against its budget, a re-run of the job itself included', () => {
    const job = call('rerun-job', 3, 201, 'repos/acme/app/actions/jobs/12');
    expect(outcome([...rescues(1, 2), job]).violations).toContain(
      'run 1 job e2e: 3 re-runs by runner-medic, over the budget of 2',
    );
  });

  it('charges a call on an attempt where nothing was lost to every job of that attempt', () => {
    const o = outcome([call('cancel', 1)], world(1, 'killed'));
    expect(o.violations).toEqual([]);
    const healthy = world(1, 'killed');
    healthy.runners = healthy.runners.map((r) => ({ ...r, stopped: 'completed' as const }));
    expect(outcome([call('cancel', 1)], healthy).violations).toEqual([
      'run 1 job lint: 1 mutating calls by runner-medic (cancel#1), over budget × rescue cost = 0 (not lost)',
      'run 1 job e2e: 1 mutating calls by runner-medic (cancel#1), over budget × rescue cost = 0 (not lost)',
    ]);
  });

  it('holds each lost runner to its clean-up: one call of each kind at most', () => {
    const w = world(1, 'killed');
    w.runners = w.runners.map((r) => ({ ...r, id: r.jobId ?? 0 }));
    const cleanup = [kubeCall('delete', 'er', 'r10'), kubeCall('delete', 'pod', 'r10')];
    const registration = call('delete-runner', 1, 204, 'orgs/acme/actions/runners/10');
    expect(outcome(rescues(1), w, cleanup).violations).toEqual([]);
    const more = [...cleanup, kubeCall('patch', 'er', 'r10'), kubeCall('patch', 'pod', 'r10')];
    expect(outcome([...rescues(1), registration], w, more).violations).toEqual([
      'run 1 job e2e: 5 clean-up calls on its 1 lost runners (delete ephemeralrunners.actions.github.com/r10, delete pods/r10, patch ephemeralrunners.actions.github.com/r10, patch pods/r10, delete-runner orgs/acme/actions/runners/10), over 4',
    ]);
  });
});
