/**
 * `runner-medic doctor --sandbox`: the embedded twins (sim/github, sim/kube) on loopback, as the
 * scenario runner starts them, with one cluster running ARC and the shipped RBAC, so a newcomer
 * sees the doctor work with nothing configured. With `findings`, the world is seeded with a few
 * of the problems the doctor looks for; without, it is a healthy set-up (the tests use both).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { DynamoClusterSightings } from '../functions/adapters/store/cluster-sightings.js';
import { createDocumentClient } from '../functions/config/compose-clients.js';
import { startEmbeddedDynamo, type EmbeddedDynamo } from './local/embedded-dynamo.js';
import { SimClock } from '../sim/clock.js';
import { GitHubSim } from '../sim/github/github-sim.js';
import {
  APP_PERMISSIONS,
  setInstallationPermissions,
} from '../sim/github/rest/installation-permissions.js';
import { SimCluster } from '../sim/kube/cluster.js';
import type { Pod } from '../sim/kube/types.js';
import { RunnerMedicError } from '../functions/ports/errors.js';

export interface DoctorSandbox {
  /** The functions' environment pointing at the twins. */
  env: Record<string, string>;
  /** The twins' clock: the doctor judges "the last hour" and "queued for N minutes" by it. */
  clock: SimClock;
  repositories: string[];
  github: GitHubSim;
  cluster: SimCluster;
  stop(): Promise<void>;
}

const SANDBOX_CLUSTER = 'sandbox';
const SANDBOX_NAMESPACE = 'arc-runners';
const OWNER = 'acme';
const GITHUB_CONFIG_URL = `https://github.com/${OWNER}`;
const REPO = 'acme/app';
const WEBHOOK_SECRET = 'runner-medic-sandbox-secret';
const SCALE_SET_LABEL = 'actions.github.com/scale-set-name';
/** How long the world runs before the doctor looks: runners up, jobs queued and picked up. */
const SETTLE_MS = 20 * 60_000;

const rbacFile = (name: string) =>
  fileURLToPath(new URL(`../infra/kubernetes/rbac/${name}`, import.meta.url));

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
}

/**
 * Seeded finding: the shipped Role without `patch` on ephemeralrunners (the stuck-finalizer
 * removal). Edited as YAML, not as text, so a change to the shipped verbs cannot quietly leave
 * the seed a healthy Role; a Role with no such rule is a sandbox bug and throws.
 */
function withoutEphemeralRunnerPatch(manifests: string): string {
  let removed = false;
  const documents = parseAllDocuments(manifests).map((document) => {
    const object = document.toJS() as { kind?: string; rules?: PolicyRule[] };
    if (object.kind !== 'Role') return object;
    for (const rule of object.rules ?? []) {
      if (!rule.resources?.includes('ephemeralrunners') || !rule.verbs?.includes('patch')) continue;
      rule.verbs = rule.verbs.filter((verb) => verb !== 'patch');
      removed = true;
    }
    return object;
  });
  if (!removed)
    throw new RunnerMedicError('bug', 'the shipped Role grants no patch on ephemeralrunners');
  return documents.map((object) => stringify(object)).join('---\n');
}

/** A webhook receiver that takes every delivery, standing in for the webhook function. */
async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    // No keep-alive: a reused socket the server has just closed would fail a delivery.
    request.on('end', () => response.writeHead(202, { connection: 'close' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string')
    throw new RunnerMedicError('bug', 'receiver has no port');
  return { url: `http://127.0.0.1:${address.port}/webhook`, server };
}

export async function startDoctorSandbox(
  options: { findings: boolean } = { findings: true },
): Promise<DoctorSandbox> {
  const { findings } = options;
  const clock = new SimClock();
  const receiver = findings ? undefined : await startReceiver();
  const github = await startGithub(clock, findings, receiver?.url);
  const cluster = await startCluster(clock, github, findings);

  github.triggerRun(REPO, 'ci');
  await clock.advance(SETTLE_MS);
  if (findings) await breakRunners(cluster, github, clock);
  const dynamo = await startEmbeddedDynamo('runner-medic-sandbox');
  await noteExporterEvents(dynamo, clock.now(), findings);

  const env: Record<string, string> = {
    TABLE_NAME: dynamo.tableName,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
    GITHUB_APP_CREDENTIALS: JSON.stringify({
      appId: github.app.appId,
      privateKey: github.app.privateKey,
    }),
    GITHUB_API_URL: github.baseUrl,
    CLUSTERS: JSON.stringify({
      [SANDBOX_CLUSTER]: {
        kind: 'kubeconfig',
        kubeconfig: cluster.kubeconfig('runner-medic'),
        namespaces: [SANDBOX_NAMESPACE],
      },
    }),
    // Seeded: a fresh deployment's policy, in dry run.
    POLICY: findings ? 'dryRun: true' : 'dryRun: false',
  };
  return {
    env,
    clock,
    repositories: [REPO],
    github,
    cluster,
    stop: async () => {
      await dynamo.close();
      await cluster.stop();
      await github.stop();
      if (receiver) await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    },
  };
}

/** The GitHub twin with the App installed on one organisation and a workflow to run. */
async function startGithub(
  clock: SimClock,
  findings: boolean,
  receiverUrl: string | undefined,
): Promise<GitHubSim> {
  const github = new GitHubSim({
    clock,
    seed: 11,
    // Seeded: every delivery is lost on the way ("failed to connect").
    webhook: { url: receiverUrl ?? 'http://127.0.0.1:9/webhook', secret: WEBHOOK_SECRET },
    knobs: findings ? { drop: 1 } : {},
  });
  github.createOrg(OWNER);
  github.createRepo(REPO);
  github.createInstallation(OWNER);
  // Seeded: the organisation never accepted the App's later ask for `checks: write`.
  if (findings)
    setInstallationPermissions(github.app, OWNER, { ...APP_PERMISSIONS, checks: 'read' });
  github.defineWorkflow(REPO, {
    name: 'ci',
    jobs: [
      { name: 'build', runsOn: 'arc-linux', durationMs: 60 * 60_000 },
      ...(findings ? [{ name: 'gpu-test', runsOn: 'arc-gpu', durationMs: 60_000 }] : []),
    ],
  });
  await github.start();
  return github;
}

/** One cluster running ARC 0.15 under the shipped RBAC, with its scale sets. */
async function startCluster(
  clock: SimClock,
  github: GitHubSim,
  findings: boolean,
): Promise<SimCluster> {
  const cluster = new SimCluster({
    name: SANDBOX_CLUSTER,
    arcVersion: '0.15',
    rbac: true,
    seed: 11,
    clock,
    actionsService: github.actions,
  });
  for (const name of ['node-a', 'node-b']) cluster.addNode({ name });
  cluster.createNamespace(SANDBOX_NAMESPACE);
  cluster.applyManifestFile(rbacFile('cluster.yaml'));
  const namespaced = readFileSync(rbacFile('runner-namespace.yaml'), 'utf8');
  const role = findings ? withoutEphemeralRunnerPatch(namespaced) : namespaced;
  cluster.applyManifest(role, { namespaces: [SANDBOX_NAMESPACE] });
  if (findings) addSeededScaleSets(cluster);
  else
    cluster.addScaleSet({
      name: 'arc-linux',
      namespace: SANDBOX_NAMESPACE,
      minRunners: 1,
      maxRunners: 3,
      githubConfigUrl: GITHUB_CONFIG_URL,
      podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      onSigterm: 'graceful-stop',
      gracefulStopTimeoutSeconds: 900,
      terminationGracePeriodSeconds: 960,
    });
  await cluster.start();
  return cluster;
}

function addSeededScaleSets(cluster: SimCluster): void {
  // Seeded: the plain template (no graceful stop, default grace period, no do-not-disrupt) ...
  cluster.addScaleSet({
    name: 'arc-linux',
    namespace: SANDBOX_NAMESPACE,
    minRunners: 2,
    maxRunners: 3,
    githubConfigUrl: GITHUB_CONFIG_URL,
  });
  // ... and a scale set whose pods an admission webhook refuses: EphemeralRunners go Failed.
  cluster.addScaleSet({
    name: 'arc-gpu',
    namespace: SANDBOX_NAMESPACE,
    minRunners: 0,
    maxRunners: 1,
    githubConfigUrl: GITHUB_CONFIG_URL,
    podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' },
  });
  cluster.faults.denyPodCreation(
    (pod: Pod) => pod.metadata.labels?.[SCALE_SET_LABEL] === 'arc-gpu',
  );
}

/** Seeded: a node goes NotReady, a runner pod disappears, a registration is abandoned. */
async function breakRunners(cluster: SimCluster, github: GitHubSim, clock: SimClock) {
  const runnerPods = cluster.api
    .all<Pod>('pods', SANDBOX_NAMESPACE)
    .filter((p) => p.metadata.labels?.[SCALE_SET_LABEL] === 'arc-linux' && p.spec?.nodeName);
  const [lost, gone] = runnerPods;
  if (!lost || !gone)
    throw new RunnerMedicError('bug', 'the sandbox expected two arc-linux runner pods');
  // Seeded: a node stops reporting (NotReady after the node-monitor grace period).
  cluster.faults.nodeNotReady(lost.spec?.nodeName as string);
  await clock.advance(60_000);
  // Seeded: a runner pod disappears; the doctor looks before ARC re-creates it.
  cluster.api.delete('scenario', 'pods', SANDBOX_NAMESPACE, gone.metadata.name as string, {
    gracePeriodSeconds: 0,
  });
  // Seeded: a registration of arc-linux that no EphemeralRunner holds.
  const scaleSetId = github.actions.registerScaleSet({ owner: OWNER, name: 'arc-linux' });
  github.actions.registerRunner(scaleSetId, 'arc-linux-abandoned-runner');
}

/** The store the functions would write, with what the engine notes of exporter events. */
async function noteExporterEvents(dynamo: EmbeddedDynamo, now: number, findings: boolean) {
  const sightings = new DynamoClusterSightings(
    createDocumentClient(dynamo.clientConfig),
    dynamo.tableName,
  );
  if (findings) {
    // Seeded: an exporter that sends a cluster name not in CLUSTERS ...
    await sightings.noteEvent('old-staging', false, now - 10 * 60_000, now);
    // ... and the sandbox cluster's own exporter, silent for three hours.
    await sightings.noteEvent(SANDBOX_CLUSTER, true, now - 3 * 3600_000, now);
  } else await sightings.noteEvent(SANDBOX_CLUSTER, true, now - 60_000, now);
}
