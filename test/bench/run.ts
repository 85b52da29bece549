/**
 * `npm run bench -- [--json] [--full] [--sections=a,b]`: every section by default, each on
 * worlds small enough that the whole bench finishes in minutes; `--full` runs the largest worlds
 * too. With --json one document is printed, each section's figures under its name.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext, BenchSection } from './section.js';

/** Each section, loaded only when it runs. */
const SECTIONS: Record<string, () => Promise<BenchSection>> = {
  ingress: async () => (await import('./ingress.js')).ingressSection,
  scale: async () => (await import('./scale.js')).scaleSection,
  coldStart: async () => (await import('./cold-start.js')).coldStartSection,
  steady: async () => (await import('./steady.js')).steadySection,
};

const args = process.argv.slice(2);
const context: BenchContext = {
  full: args.includes('--full'),
  asJson: args.includes('--json'),
  args,
};
const chosen =
  args
    .find((a) => a.startsWith('--sections='))
    ?.split('=')[1]
    ?.split(',') ?? Object.keys(SECTIONS);
const unknown = chosen.filter((name) => !(name in SECTIONS));
if (unknown.length > 0) {
  console.error(
    `unknown section(s) ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`,
  );
  process.exit(2);
}

const document: Record<string, unknown> = {};
for (const name of chosen) {
  const load = SECTIONS[name] as () => Promise<BenchSection>;
  const started = performance.now();
  document[name] = await (await load())(context);
  // On stderr, so that the --json document on stdout stays one document.
  console.error(`bench: ${name} took ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
if (context.asJson) process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
process.exit(0);
