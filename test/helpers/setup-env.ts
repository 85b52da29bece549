// Shared test setup: quiet structured logs unless a test asks for them, and never a real AWS call.
import { runZeroDelayTimersOnNextTurn } from './zero-delay-timers.js';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_DEV ??= 'false';
process.env.AWS_REGION ??= 'eu-west-1';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// The Kubernetes twin's watches end their `timeoutSeconds` (and send the bookmark 2 s before it)
// on 10 real ms a second instead of 1000: the tests' simulated clocks stand still while runner-medic
// waits on a watch, so the real second only cost wall time (16 s in two engine tests alone).
// A twin built with its own watchSecondMs (npm run twin's) keeps it.
process.env.SIM_KUBE_WATCH_SECOND_MS ??= '10';
runZeroDelayTimersOnNextTurn();
