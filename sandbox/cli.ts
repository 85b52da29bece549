/**
 * The CLI in a clone (bin/runner-medic.mjs, `npm run serve`, `npm run doctor`): the product's
 * commands, lent the twins for `--sandbox`. They are loaded only when a command asks for them.
 */
import type { CliSandbox } from '../functions/cli/cli-sandbox.js';
import { runProcess } from '../functions/cli/run-process.js';

const sandbox: CliSandbox = {
  async startDoctor() {
    const { startDoctorSandbox } = await import('./doctor-sandbox.js');
    return startDoctorSandbox({ findings: true });
  },
  async playServe(options) {
    const { playServeSandbox } = await import('./serve-sandbox.js');
    return playServeSandbox(options);
  },
  async playReplay(file) {
    const { playForReplay, SANDBOX_SCENARIO } = await import('./replay-sandbox.js');
    return playForReplay(file ?? SANDBOX_SCENARIO, { dryRun: true });
  },
};

await runProcess({ sandbox });
