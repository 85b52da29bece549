import { runCli } from './main.js';

/** Exit code of a crash: not a finding (1) nor a connection problem (2); sysexits' EX_SOFTWARE. */
const CRASHED = 70;

try {
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
} catch (error) {
  process.stderr.write(
    `runner-medic: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = CRASHED;
}
