import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import type { ClusterTwin } from '../scenario/cluster-twin.js';
import { createKubeClusterTwin } from '../scenario/kube-cluster-twin.js';
import { START, runScenario } from '../scenario/run-scenario.js';
import type { Scenario } from '../scenario/scenario-schema.js';

export interface TwinOptions {
  /** A parsed scenario to seed both twins from; without it, an empty cluster and GitHub. */
  scenario: Scenario | undefined;
  /** Simulated seconds per real second. */
  speed: number;
  write: (text: string) => void;
  /** Resolves when the twins should stop (Ctrl-C). */
  stopRequested: Promise<void>;
}

/** Where a caller finds the twins: files written for kubectl, curl and runner-medic. */
interface TwinAddresses {
  githubApiUrl: string;
  /** One kubeconfig per cluster, authenticating as `admin`. */
  kubeconfigs: string[];
  /** Shell `export` lines that point runner-medic's commands at the twins. */
  envFile: string;
  /** A user token for curl (`Authorization: token …`). */
  githubToken: string;
}

const TICK_MS = 50;

/**
 * `npm run twin`: both twins on loopback, the simulated clock paced against the wall clock, until
 * `stopRequested` resolves. Prints where to find them, then the twins' timeline.
 */
export async function runTwins(options: TwinOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'runner-medic-twin-'));
  try {
    if (options.scenario) await seeded(options.scenario, dir, options);
    else await empty(dir, options);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  options.write('twin: stopped\n');
}

async function seeded(scenario: Scenario, dir: string, options: TwinOptions): Promise<void> {
  await runScenario(
    { ...scenario, durationSeconds: Number.MAX_SAFE_INTEGER / 1000 },
    {
      remediation: false,
      // kubectl and runner-medic watch this twin in real time, from outside its clock.
      createCluster: (input) => createKubeClusterTwin(input, { watchSecondMs: 1000 }),
      onTimeline: (line) => options.write(`${line}\n`),
      onStarted: ({ github, clusters }) => {
        const namespaces = new Map(
          scenario.clusters.map((c) => [c.name, [...new Set(c.scaleSets.map((s) => s.namespace))]]),
        );
        announce(
          writeAddresses(dir, github, clusters, (name) => namespaces.get(name)),
          options,
          scenario.name,
        );
      },
      drive: (clock) => paced(clock, options),
    },
  );
}

async function empty(dir: string, options: TwinOptions): Promise<void> {
  const clock = new SimClock(START);
  const github = new GitHubSim({ clock });
  const cluster = new SimCluster({
    name: 'twin',
    clock,
    actionsService: github.actions,
    watchSecondMs: 1000,
  });
  await github.start();
  await cluster.start();
  try {
    const twin: ClusterTwin = {
      name: cluster.name,
      kubeconfig: (actor) => cluster.kubeconfig(actor),
      audit: () => cluster.audit.entries,
      onBusEntry: () => undefined,
      applyFault: () => Promise.reject(new Error('no faults in an empty twin')),
      stop: () => cluster.stop(),
    };
    announce(
      writeAddresses(dir, github, [twin], () => undefined),
      options,
      'an empty cluster',
    );
    await paced(clock, options);
  } finally {
    await cluster.stop();
    await github.stop();
  }
}

function writeAddresses(
  dir: string,
  github: GitHubSim,
  clusters: ClusterTwin[],
  namespacesOf: (cluster: string) => string[] | undefined,
): TwinAddresses {
  const kubeconfigs = clusters.map((cluster) => {
    const file = join(dir, `${cluster.name}.kubeconfig`);
    writeFileSync(file, cluster.kubeconfig('admin'), { mode: 0o600 });
    writeFileSync(
      join(dir, `${cluster.name}.runner-medic.kubeconfig`),
      cluster.kubeconfig('runner-medic'),
      {
        mode: 0o600,
      },
    );
    return file;
  });
  const clustersSetting = Object.fromEntries(
    clusters.map((cluster) => {
      const namespaces = namespacesOf(cluster.name);
      return [
        cluster.name,
        {
          kind: 'kubeconfig',
          kubeconfig: join(dir, `${cluster.name}.runner-medic.kubeconfig`),
          ...(namespaces ? { namespaces } : {}),
        },
      ];
    }),
  );
  const app = JSON.stringify({ appId: github.app.appId, privateKey: github.app.privateKey });
  const envFile = join(dir, 'runner-medic.env');
  writeFileSync(
    envFile,
    [
      `export GITHUB_API_URL='${github.baseUrl}'`,
      `export GITHUB_APP_CREDENTIALS='${app}'`,
      `export CLUSTERS='${JSON.stringify(clustersSetting)}'`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    githubApiUrl: github.baseUrl,
    kubeconfigs,
    envFile,
    githubToken: github.issueUserToken('octocat'),
  };
}

function announce(addresses: TwinAddresses, options: TwinOptions, seed: string): void {
  options.write(
    [
      `twin: ready, seeded from ${seed}, ${options.speed}x simulated time; Ctrl-C stops it`,
      `KUBECONFIG=${addresses.kubeconfigs.join(':')}`,
      `GITHUB_API_URL=${addresses.githubApiUrl}`,
      `GITHUB_TOKEN=${addresses.githubToken}`,
      `RUNNER_MEDIC_ENV=${addresses.envFile}`,
      `  kubectl --kubeconfig ${addresses.kubeconfigs[0] ?? ''} get nodes,pods -A`,
      `  curl -H "Authorization: token $GITHUB_TOKEN" $GITHUB_API_URL/rate_limit`,
      `  source ${addresses.envFile}   # GITHUB_API_URL, GITHUB_APP_CREDENTIALS, CLUSTERS for runner-medic`,
      '',
    ].join('\n'),
  );
}

/** Advances the simulated clock with the wall clock (times `speed`) until a stop is requested. */
async function paced(clock: SimClock, options: TwinOptions): Promise<void> {
  let stop = false;
  void options.stopRequested.then(() => (stop = true));
  let last = performance.now();
  while (!stop) {
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    const now = performance.now();
    await clock.advance(Math.round((now - last) * options.speed));
    last = now;
  }
}
