/**
 * The first seed report, played with ARC alone (test/scenarios/seed-evicted-before-pickup.yaml):
 * the runner pod is rejected as it starts, ARC 0.9 never replaces it and the job waits. Two
 * minutes in, `runner-medic rescue <job URL> --yes` runs with the functions' own wiring
 * (engineFromEnvironment: the twins, dynalite, a loopback EventBridge) and the job recovers.
 */
import { join } from 'node:path';
import { runCli } from '../../functions/cli/main.js';
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { EventBridgeSim } from '../../sim/aws/eventbridge-sim.js';
import type { GitHubSim } from '../../sim/github/github-sim.js';
import type { ClusterTwin } from '../../sandbox/scenario/cluster-twin.js';
import { createKubeClusterTwin } from '../../sandbox/scenario/kube-cluster-twin.js';
import { runScenario, START } from '../../sandbox/scenario/run-scenario.js';
import { loadScenario } from '../../sandbox/scenario/scenario-schema.js';
import { SCENARIO_DIR } from '../e2e/scenario-play.js';

test('rescue on the first seed’s stuck job frees the poisoned slot, and the job runs', async () => {
  const scenario = await loadScenario(join(SCENARIO_DIR, 'seed-evicted-before-pickup.yaml'));
  const dynamo = await startEmbeddedDynamo('runner-medic-rescue');
  const bus = new EventBridgeSim();
  const busUrl = await bus.start();
  let github: GitHubSim | undefined;
  let clusters: ClusterTwin[] = [];
  const said: string[] = [];
  const codes: number[] = [];
  try {
    const outcome = await runScenario(scenario, {
      remediation: false,
      createCluster: createKubeClusterTwin,
      onStarted: (twins) => {
        github = twins.github;
        clusters = twins.clusters;
      },
      drive: async (clock, end) => {
        await clock.advanceTo(START + 120_000);
        const run = github?.runs()[0];
        const job = run?.jobs[0];
        expect(job).toMatchObject({ status: 'queued' });
        const env = {
          TABLE_NAME: dynamo.tableName,
          DYNAMODB_ENDPOINT: dynamo.endpoint,
          EVENTBRIDGE_ENDPOINT: busUrl,
          GITHUB_API_URL: github?.baseUrl,
          GITHUB_APP_CREDENTIALS: JSON.stringify({
            appId: github?.app.appId,
            privateKey: github?.app.privateKey,
          }),
          CLUSTERS: JSON.stringify(
            Object.fromEntries(
              clusters.map((c) => [
                c.name,
                {
                  kind: 'kubeconfig',
                  kubeconfig: c.kubeconfig('runner-medic'),
                  // As deployed: runner-medic's RBAC is namespaced to the runner namespaces.
                  namespaces: [
                    ...new Set(
                      scenario.clusters
                        .filter((spec) => spec.name === c.name)
                        .flatMap((spec) => spec.scaleSets.map((set) => set.namespace)),
                    ),
                  ],
                },
              ]),
            ),
          ),
          POLICY: 'dryRun: false',
        };
        const url = `https://github.com/acme/app/actions/runs/${run?.id}/job/${job?.id}`;
        const io = {
          env,
          out: (t: string) => void said.push(t),
          err: (t: string) => void said.push(t),
        };
        codes.push(await runCli(['rescue', url], io, { clock }));
        codes.push(await runCli(['rescue', url, '--yes'], io, { clock }));
        await clock.advanceTo(end);
      },
    });
    const text = said.join('');
    expect(text).toMatch(/would: delete-ephemeral-runner \[rule-1-free-poisoned-slot\]/);
    expect(text).toContain('Nothing was done. Run again with --yes to do it.');
    expect(text).toMatch(/did: delete-ephemeral-runner: succeeded/);
    expect(codes).toEqual([0, 0]);
    expect(outcome.jobs).toEqual([
      expect.objectContaining({ name: 'build', conclusion: 'success', attempts: 1 }),
    ]);
    expect(outcome.actions.filter((a) => a.by === 'runner-medic').map((a) => a.verb)).toEqual([
      'delete',
    ]);
  } finally {
    await bus.stop();
    await dynamo.close();
  }
}, 180_000);
