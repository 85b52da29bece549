#!/usr/bin/env node
/* global process, URL */
// The `runner-medic` bin (package.json), for a clone. It runs sandbox/cli.ts (the product's CLI,
// lent the twins for --sandbox; the image runs functions/cli/entry.ts instead) with the project's
// TypeScript loader (tsx, imported into the one node process: its CLI would add a second process
// between this launcher and serve, relaying signals) on the project's Node 24 (the `node` dev
// dependency), whatever `node` started this launcher: plain JavaScript that any Node since 18 can
// run.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const projectNode = `${root}node_modules/.bin/node`;
const tsx = `${root}node_modules/tsx/dist/loader.mjs`;
const entry = `${root}sandbox/cli.ts`;

if (!existsSync(tsx)) {
  process.stderr.write('runner-medic: run `npm ci` in the repository first (tsx is missing)\n');
  process.exit(70);
}

const child = spawn(
  existsSync(projectNode) ? projectNode : process.execPath,
  ['--import', pathToFileURL(tsx).href, entry, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 70);
});
