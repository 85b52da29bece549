import { loadLocalSettings } from '../config/settings.js';
import { startLocalRuntime } from './local-runtime.js';

const settings = loadLocalSettings(process.env);
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

if (settings.sandbox) {
  // The sandbox: runner-medic's handlers around the simulated GitHub and cluster, no network.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { playSandbox } = await import('../../sim/scenario/sandbox.js');
  await playSandbox({
    file: settings.sandbox.scenario,
    speed: settings.sandbox.speed,
    write: (text) => process.stderr.write(text),
  });
}
