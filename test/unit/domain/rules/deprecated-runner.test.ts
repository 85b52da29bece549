import { decide } from '../../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY, parsePolicy } from '../../../../functions/domain/policy/policy.js';
import { runnerVersionOf, versionIn } from '../../../../functions/domain/decide/runner-version.js';
import { er, facts, job, pod, unwrap } from '../builders.js';
import { T0, iso } from '../fixtures.js';

const S = 1000;
const reports = (f: Facts, now: number, p = DEFAULT_POLICY) =>
  decide(f, p, now).actions.filter((a) => a.target.kind === 'report-deprecated-runner');
const exited = (exitCode: number) =>
  pod({
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [
      {
        name: 'runner',
        state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' } },
      },
    ],
  });
const queued = job({
  jobId: 501,
  status: 'queued',
  conclusion: null,
  runnerName: null,
  runnerId: null,
  createdAt: iso(T0 - 600 * S),
  completedAt: null,
});

describe('rule 8: runners that leave without taking a job (a runner version GitHub refuses)', () => {
  it('reports a runner container that exited 0 without a job, once per scale set and version, and deletes nothing', () => {
    const f = facts({ pods: [exited(0)], ephemeralRunners: [er()] });
    const d = decide(f, DEFAULT_POLICY, T0);
    const [report] = d.actions.filter((a) => a.target.kind === 'report-deprecated-runner');
    expect(report?.rule).toBe('rule-8-deprecated-runner');
    expect(report?.key).toBe(
      'report-deprecated-runner:prod-eu:arc-runners:arc-runner-set:unknown-version',
    );
    expect(report?.target).toMatchObject({ scaleSet: 'arc-runner-set', version: null });
    expect(d.actions.map((a) => a.target.kind)).not.toContain('delete-ephemeral-runner');
    expect(d.actions.map((a) => a.target.kind)).not.toContain('delete-pod');
  });

  it('says nothing of a runner that took a job, or failed with a non-zero exit', () => {
    const busy = facts({
      pods: [exited(0)],
      ephemeralRunners: [
        er({
          job: {
            jobRepositoryName: 'acme/app',
            workflowRunId: 9_000_000_001,
            jobDisplayName: 'build',
          },
        }),
      ],
    });
    expect(reports(busy, T0)).toEqual([]);
    expect(reports(facts({ pods: [exited(1)], ephemeralRunners: [er()] }), T0)).toEqual([]);
  });

  it('sees the cycling at a sweep: an idle runner created after the queued job started starving', () => {
    const fresh = (createdAt: number) => {
      const p = pod();
      return { ...p, metadata: { ...p.metadata, creationTimestamp: createdAt } };
    };
    const late = facts({ jobs: [queued], pods: [fresh(T0 - 200 * S)], ephemeralRunners: [er()] });
    expect(reports(late, T0).map((a) => a.reason)).toEqual([
      expect.stringMatching(/job 501 queued since .*created 400 s later, has not taken it/),
    ]);
    // A runner created before the job had waited the starving-queue threshold: nothing yet.
    const early = { ...late, pods: [fresh(T0 - 400 * S)] };
    expect(reports(early, T0)).toEqual([]);
    const off = unwrap(parsePolicy('rules: { deprecatedRunner: { enabled: false } }'));
    expect(reports(late, T0, off)).toEqual([]);
  });

  it('reads a runner version from a refusal text or a runner image tag', () => {
    expect(versionIn('Runner version v2.328.0 is deprecated and cannot receive messages.')).toBe(
      '2.328.0',
    );
    expect(versionIn('exit 0')).toBeNull();
    const p = pod();
    expect(runnerVersionOf(p)).toBeNull();
    const tagged = (image: string) => ({ ...p, runnerImage: image });
    expect(runnerVersionOf(tagged('ghcr.io/actions/actions-runner:2.328.0'))).toBe('2.328.0');
    expect(runnerVersionOf(tagged('ghcr.io/actions/actions-runner:latest'))).toBeNull();
  });
});
