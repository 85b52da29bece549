/**
 * The embedded sandbox behind `npx serverless invoke local --stage local` (see
 * local-invoke-plugin.cjs): an in-memory DynamoDB with runner-medic's table, the GitHub twin
 * (sim/github) as the App's API, and the cluster twin `prod-eu` (sim/kube) that the events/
 * samples name, all on 127.0.0.1. Nothing reaches AWS or GitHub.
 */
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { SimCluster } from '../../sim/kube/index.js';

/** The runner namespace of the events/ samples. */
const SAMPLE_NAMESPACE = 'github-runners';

export interface InvokeSandbox {
  /** Environment for the handler: endpoints, table, the twin App's key, the twin cluster. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startInvokeSandbox(tableName: string): Promise<InvokeSandbox> {
  const dynamo = await startEmbeddedDynamo(tableName);
  const clock = new SimClock();
  const github = new GitHubSim({ clock, appId: 1 });
  const githubUrl = await github.start();
  const cluster = new SimCluster({ name: 'prod-eu', clock, seed: 1 });
  await cluster.start();
  cluster.createNamespace(SAMPLE_NAMESPACE);
  return {
    env: {
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      // The embedded DynamoDB takes any credentials; the SDK needs some to sign.
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      GITHUB_API_URL: githubUrl,
      GITHUB_APP_CREDENTIALS: JSON.stringify({
        appId: github.app.appId,
        privateKey: github.app.privateKey,
      }),
      CLUSTERS: JSON.stringify({
        'prod-eu': {
          kind: 'kubeconfig',
          kubeconfig: cluster.kubeconfig('runner-medic'),
          namespaces: [SAMPLE_NAMESPACE],
        },
      }),
    },
    close: async () => {
      await cluster.stop();
      await github.stop();
      await dynamo.close();
    },
  };
}
