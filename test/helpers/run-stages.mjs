/* global process, console */
/**
 * `npm test`'s checks before jest: each argument is an npm script, run as many at once as there
 * are cores (in the order given, so put the longest first). Each script's output is printed
 * whole when it ends, with its time; the exit code is 1 if any failed.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';

const queue = process.argv.slice(2);
let failed = 0;

function run(script) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn('npm', ['run', '-s', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(Buffer.concat(output));
      console.log(`${code === 0 ? 'passed' : 'FAILED'}: npm run ${script} (${seconds} s)`);
      if (code !== 0) failed++;
      resolve();
    });
  });
}

async function worker() {
  for (let script = queue.shift(); script !== undefined; script = queue.shift()) await run(script);
}

await Promise.all(Array.from({ length: Math.min(availableParallelism(), queue.length) }, worker));
process.exit(failed > 0 ? 1 : 0);
