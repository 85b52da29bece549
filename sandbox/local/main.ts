import { parseArgs } from 'node:util';
import { loadSettings } from '../../functions/config/settings.js';
import { startLocalRuntime } from './local-runtime.js';

const USAGE = `usage: npm start [-- --once]

  (no flag)  serve the webhook endpoint on PORT and play the sandbox scenario beside it,
             until stopped with Ctrl-C
  --once     play the sandbox scenario, print its story and outcome, and exit:
             0 when runner-medic recovered every job the scenario expects, 1 when not
`;

const { values: flags } = parseArgs({
  options: { once: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
  strict: true,
});
if (flags.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const settings = loadSettings(process.env, 'local');

if (flags.once) {
  if (!settings.sandbox) {
    process.stderr.write('npm start -- --once plays the sandbox, and SANDBOX=off turns it off\n');
    process.exit(2);
  }
  const recovered = await playSandbox(settings.sandbox);
  process.exit(recovered ? 0 : 1);
}

const runtime = await startLocalRuntime({ settings, sink: process.stdout });
process.stderr.write(
  `runner-medic local runtime on ${runtime.url}\n` +
    `  POST ${runtime.url}/webhook   (GitHub webhooks, signed with GITHUB_WEBHOOK_SECRET)\n` +
    `  GET  ${runtime.url}/healthz\n` +
    `  store: embedded DynamoDB (dynalite, in memory); events: one JSON line each on stdout\n`,
);

const stop = async () => {
  await runtime.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

if (settings.sandbox) await playSandbox(settings.sandbox);

/** The sandbox: runner-medic's handlers around the simulated GitHub and cluster, no network. */
async function playSandbox(sandbox: { scenario: string; speed: number }): Promise<boolean> {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { playSandbox: play } = await import('../scenario/sandbox.js');
  const result = await play({
    file: sandbox.scenario,
    speed: sandbox.speed,
    write: (text) => process.stderr.write(text),
  });
  return result.recovered;
}
