import type { CliSeams } from './main.js';
import { runCli } from './main.js';

/** Exit code of a crash: not a finding (1) nor a connection problem (2); sysexits' EX_SOFTWARE. */
const CRASHED = 70;

/** Runs the process's command line and sets its exit code. */
export async function runProcess(seams: CliSeams = {}): Promise<void> {
  try {
    process.exitCode = await runCli(
      process.argv.slice(2),
      {
        env: process.env,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      },
      seams,
    );
  } catch (error) {
    process.stderr.write(
      `runner-medic: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = CRASHED;
  }
}
