/**
 * `npm run twin -- [SCENARIO.yaml] [--speed N]`: the Kubernetes and GitHub twins on loopback,
 * seeded from a scenario (its clusters, repos, runs and faults, without runner-medic) or empty.
 * Prints a kubeconfig path and the GitHub API URL, then runs until Ctrl-C.
 */
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const { loadScenario, ScenarioError } = await import('../scenario/scenario-schema.js');
const { runTwins } = await import('./standalone-twins.js');

const HELP = `usage: npm run twin -- [SCENARIO.yaml] [--speed N] [--help]

Starts the Kubernetes twin (API server, ARC, kubelet, Karpenter, EC2) and the GitHub twin
(REST API, App auth, webhooks) on 127.0.0.1, on one simulated clock paced against the wall clock.

  SCENARIO.yaml  seed both twins from a scenario: its clusters, repos, runs and faults play out
                 as they would with ARC alone (runner-medic is not started). Without it: an empty
                 cluster named "twin" and a GitHub with no repositories.
  --speed N      simulated seconds per real second (default 1)
  --help         this text

It prints:
  KUBECONFIG=…        kubeconfig file(s) for kubectl and @kubernetes/client-node (user admin)
  GITHUB_API_URL=…    the REST API, for curl and octokit (baseUrl)
  GITHUB_TOKEN=…      a user token: curl -H "Authorization: token $GITHUB_TOKEN" …
  RUNNER_MEDIC_ENV=…  a file to source: GITHUB_API_URL, GITHUB_APP_CREDENTIALS and CLUSTERS
                      pointing runner-medic's own commands at the twins

The files live in a temporary directory removed when the twin stops. Ctrl-C (SIGINT) or SIGTERM
stops both twins and exits 0.
`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${HELP}`);
  process.exit(2);
}

let speed = 1;
const files: string[] = [];
for (let i = 0; i < args.length; i += 1) {
  const arg = args[i] ?? '';
  if (arg === '--speed') {
    speed = Number(args[(i += 1)]);
    if (!(speed > 0 && Number.isFinite(speed))) fail('--speed takes a positive number');
  } else if (arg.startsWith('-')) fail(`unknown option ${arg}`);
  else files.push(arg);
}
if (files.length > 1) fail('give at most one scenario file');

let scenario;
try {
  scenario = files[0] === undefined ? undefined : await loadScenario(files[0]);
} catch (error) {
  if (error instanceof ScenarioError) fail(error.message);
  throw error;
}

let requestStop: () => void = () => undefined;
const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
// `on`, not `once`: a second Ctrl-C must not kill the twin before it has removed its files.
process.on('SIGINT', () => requestStop());
process.on('SIGTERM', () => requestStop());

await runTwins({
  scenario,
  speed,
  write: (text) => process.stdout.write(text),
  stopRequested,
});
process.stdout.write('', () => process.exit(0));
