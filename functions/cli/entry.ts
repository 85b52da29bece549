/** The CLI as it ships (the container image's entrypoint): no sandbox, no twins. */
import { runProcess } from './run-process.js';

await runProcess();
