/**
 * `npm run scenario -- FILE… [--json] [--without-remediation] [--verbose]`: plays scenarios on
 * the simulators, prints a timeline and an outcome (or one JSON document), and exits 1 when an
 * expectation fails or an invariant is violated.
 */
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const { loadScenario, ScenarioError } = await import('./scenario-schema.js');
const { runScenario } = await import('./run-scenario.js');
const { createKubeClusterTwin } = await import('./kube-cluster-twin.js');
const { formatOutcome } = await import('./format-outcome.js');

const args = process.argv.slice(2);
const json = args.includes('--json');
const remediation = !args.includes('--without-remediation');
const verbose = args.includes('--verbose');
const files = args.filter((a) => !a.startsWith('--'));
const unknown = args.filter(
  (a) => a.startsWith('--') && !['--json', '--without-remediation', '--verbose'].includes(a),
);

if (files.length === 0 || unknown.length > 0) {
  process.stderr.write(
    `${unknown.length > 0 ? `unknown option ${unknown.join(' ')}\n` : ''}usage: npm run scenario -- FILE… [--json] [--without-remediation] [--verbose]\n`,
  );
  process.exit(2);
}

const outcomes = [];
for (const file of files) {
  try {
    const scenario = await loadScenario(file);
    const outcome = await runScenario(scenario, {
      remediation,
      createCluster: createKubeClusterTwin,
      verbose,
      ...(json ? {} : { onTimeline: (line: string) => process.stdout.write(`${line}\n`) }),
    });
    outcomes.push(outcome);
    if (!json) process.stdout.write(`${formatOutcome(outcome)}\n`);
  } catch (error) {
    if (error instanceof ScenarioError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}
const code = outcomes.every((o) => o.passed) ? 0 : 1;
const output = json
  ? `${JSON.stringify(outcomes.length === 1 ? outcomes[0] : outcomes, null, 2)}\n`
  : '';
// Exit only once stdout has drained: a pipe would otherwise cut a large JSON document short.
process.stdout.write(output, () => process.exit(code));
