import type { Action } from '../../../functions/domain/model/action.js';
import { carryOut } from '../../../functions/engine/carry-out.js';
import type { ClusterGateways } from '../../../functions/ports/cluster-gateway.js';
import { UnknownClusterError } from '../../../functions/adapters/kubernetes/cluster-connections.js';
import {
  GithubRequestError,
  GithubResponseError,
} from '../../../functions/adapters/github/github-errors.js';
import { GithubUnavailableError } from '../../../functions/ports/github-gateway.js';
import type {
  AttemptPrecondition,
  GithubGateway,
  GithubMutation,
  RunnerVersionDeprecation,
} from '../../../functions/ports/github-gateway.js';

/** The port, answering as the adapter would; only what these actions call. */
function github(answers: {
  cancel?: GithubMutation | Error;
  deprecation?: RunnerVersionDeprecation | null | Error;
}): { port: GithubGateway; asked: unknown[] } {
  const asked: unknown[] = [];
  const port = new Proxy({} as GithubGateway, {
    get: (_, name) => {
      if (name === 'cancelRun')
        return async (_ref: unknown, expected: AttemptPrecondition) => {
          asked.push(expected);
          if (answers.cancel instanceof Error) throw answers.cancel;
          return answers.cancel ?? { result: 'done' };
        };
      if (name === 'runnerVersionDeprecation')
        return async (version: string, owner: unknown) => {
          asked.push({ version, owner });
          if (answers.deprecation instanceof Error) throw answers.deprecation;
          return answers.deprecation ?? null;
        };
      throw new Error(`unexpected call ${String(name)}`);
    },
  });
  return { port, asked };
}
const noClusters = {} as ClusterGateways;
const scope = {
  cluster: 'eks-ci',
  namespace: 'arc-runners',
  scaleSet: 'arc-linux',
  repo: 'acme/app',
  runnerName: 'arc-linux-x-runner-y',
  jobUrl: null,
};
const action = (target: Action['target']): Action => ({
  key: 'k',
  rule: 'rule-4-hung-job',
  target,
  scope,
  cause: null,
  signal: null,
  reason: 'test',
  dryRun: false,
  budgetKeys: [],
});
const cancel = action({
  kind: 'cancel-run',
  repo: 'acme/app',
  installationId: 7,
  runId: 12,
  runAttempt: 1,
  jobIds: [34],
  allowLiveJobs: false,
});
const report = (version: string | null) =>
  action({
    kind: 'report-deprecated-runner',
    cluster: 'eks-ci',
    namespace: 'arc-runners',
    scaleSet: 'arc-linux',
    version,
    runnerName: 'arc-linux-x-runner-y',
    evidence: 'runner container exited 0 without a job',
    owner: { repo: 'acme/app' },
    installationId: 7,
  });

describe('carrying out the fast path and the deprecation report', () => {
  it('asks GitHub to cancel only while the dead jobs run and no other job does', async () => {
    const { port, asked } = github({});
    expect(await carryOut(cancel, noClusters, port)).toEqual({
      outcome: 'succeeded',
      detail: 'done',
    });
    expect(asked).toEqual([
      { runId: 12, runAttempt: 1, jobs: { inProgress: [34], allowLiveJobs: false } },
    ]);
  });

  it('makes a cancel GitHub refused for now a retry-later', async () => {
    const refused = { result: 'try-again', message: 'Failed to cancel workflow run' } as const;
    expect(await carryOut(cancel, noClusters, github({ cancel: refused }).port)).toEqual({
      outcome: 'retry-later',
      detail: 'Failed to cancel workflow run',
    });
  });

  it('says when a deprecated version stops working, from GitHub', async () => {
    const { port, asked } = github({
      deprecation: {
        version: '2.328.0',
        runtimeDeprecatesAt: Date.parse('2026-09-25T00:00:00Z'),
        registrationDeprecatesAt: null,
      },
    });
    const done = await carryOut(report('2.328.0'), noClusters, port);
    expect(done.outcome).toBe('succeeded');
    expect(done.detail).toMatch(
      /runner version 2\.328\.0 is deprecated: it stops running jobs at 2026-09-25T00:00:00\.000Z and stops registering at not announced/,
    );
    expect(asked).toEqual([{ version: '2.328.0', owner: { repo: 'acme/app' } }]);
  });

  it('still reports without a version, or when GitHub cannot say', async () => {
    const { port, asked } = github({});
    expect((await carryOut(report(null), noClusters, port)).detail).toMatch(
      /exit 0 without taking a job .*runner version unknown/,
    );
    expect(asked).toEqual([]);
    const failing = github({ deprecation: new Error('503') }).port;
    expect((await carryOut(report('2.328.0'), noClusters, failing)).detail).toMatch(
      /deprecation dates could not be read \(503\)/,
    );
  });

  it('reads a failure by its kind: unavailable fails, refused gives up, the rest is thrown', async () => {
    const failing = (error: Error) => carryOut(cancel, noClusters, github({ cancel: error }).port);
    const down = new GithubUnavailableError('503 Service Unavailable');
    expect(await failing(down)).toEqual({
      outcome: 'failed',
      detail: '503 Service Unavailable',
      error: down,
    });
    expect(await failing(new GithubRequestError('403 Resource not accessible', 403))).toEqual({
      outcome: 'gave-up',
      detail: 'GithubRequestError: 403 Resource not accessible',
    });
    const clusters = {
      forCluster: () => Promise.reject(new UnknownClusterError('eks-other')),
    } as unknown as ClusterGateways;
    const deletePod = action({
      kind: 'delete-pod',
      cluster: 'eks-other',
      namespace: 'arc-runners',
      name: 'p',
      uid: 'u',
      force: false,
    });
    expect(await carryOut(deletePod, clusters, github({}).port)).toEqual({
      outcome: 'gave-up',
      detail: 'UnknownClusterError: cluster "eks-other" is not configured',
    });
    await expect(failing(new GithubResponseError('unexpected response at id'))).rejects.toThrow(
      'unexpected response at id',
    );
    await expect(failing(new TypeError('a bug'))).rejects.toThrow('a bug');
  });
});
