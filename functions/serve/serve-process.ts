/**
 * `runner-medic serve` as a process (the container's entrypoint, infra/kubernetes/in-cluster/):
 * the runtime on the system clock and timers, the API server from KUBECONFIG when set and the
 * pod's service account otherwise, audit events and log lines as JSON on stdout, people's lines on
 * stderr. It runs until SIGTERM or SIGINT, then drains (ServeRuntime.drain: no more work, the
 * running action finished and its claim recorded, what was queued handed to the store, the Lease
 * released) and resolves 0.
 *
 * Settings for tests only (test/serve/serve-leader-kill-process.test.ts), never for a deployment:
 * - RUNNER_MEDIC_TEST_HALT=before-result makes the replica stop for good between its first
 *   action's effect and the record of its result, `after-result` between that record and the
 *   action's audit event; it says so on stdout, keeps its Lease renewed, and waits for the test's
 *   SIGKILL;
 * - RUNNER_MEDIC_TEST_STALE_CLAIM_SECONDS shortens the time after which a claim without a result
 *   is re-checked (the engine's 120 s).
 */
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { LineWriter } from '../adapters/bus/stream-publisher.js';
import { ConfigError } from '../config/settings.js';
import { systemClock } from '../ports/clock.js';
import { ServeRuntime } from './serve-runtime.js';
import { systemTimers } from './timers.js';

type Env = Record<string, string | undefined>;

export interface ServeProcessIo {
  env: Env;
  /** JSON lines: audit events and log lines. */
  out: LineWriter;
  /** Lines for people: the banner, how it stopped. */
  err: (text: string) => void;
  /** Where SIGTERM and SIGINT arrive. @default process */
  signals?: Pick<NodeJS.Process, 'once'>;
}

/** Exit code of a configuration error, as `npm start` and the doctor give it. */
const CONFIG_ERROR = 2;

export async function runServe(io: ServeProcessIo): Promise<number> {
  let runtime: ServeRuntime;
  try {
    const kubeconfig = new KubeConfig();
    if (io.env.KUBECONFIG) kubeconfig.loadFromFile(io.env.KUBECONFIG);
    else kubeconfig.loadFromCluster();
    runtime = new ServeRuntime({
      env: io.env,
      clock: systemClock,
      timers: systemTimers,
      kubeconfig,
      out: io.out,
      verbose: io.env.RUNNER_MEDIC_VERBOSE === 'true',
      ...testHooks(io),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`runner-medic serve: configuration:\n${error.message}\n`);
    return CONFIG_ERROR;
  }
  const stopped = new Promise<string>((resolve) => {
    const signals = io.signals ?? process;
    signals.once('SIGTERM', () => resolve('SIGTERM'));
    signals.once('SIGINT', () => resolve('SIGINT'));
  });
  const { webhookUrl, probeUrl } = await runtime.start();
  io.err(
    `runner-medic serve ${runtime.identity} in cluster ${runtime.settings.cluster}\n` +
      `  POST ${webhookUrl}/webhook   (GitHub webhooks)\n` +
      `  GET  ${probeUrl}/healthz  ${probeUrl}/readyz  ${probeUrl}/metrics\n` +
      `  store: ${runtime.settings.store === 'sqlite' ? `SQLite ${runtime.settings.sqlitePath}` : 'DynamoDB'}; ` +
      `Lease ${runtime.settings.lease.namespace}/${runtime.settings.lease.name}\n`,
  );
  const signal = await stopped;
  io.err(`runner-medic serve: ${signal}: draining\n`);
  await runtime.drain();
  io.err('runner-medic serve: stopped\n');
  return 0;
}

/** The test-only settings (see the top of this file); none unless their variables are set. */
function testHooks(io: ServeProcessIo): {
  beforeResult?: (key: string) => Promise<void>;
  afterAct?: (action: { key: string }) => Promise<void>;
  staleClaimMs?: number;
} {
  const halt = (where: string) => async (key: string) => {
    io.out.write(
      `${JSON.stringify({ level: 'warn', message: `test hook: halted ${where}`, key })}\n`,
    );
    // Waits for the test's SIGKILL.
    await new Promise<never>(() => undefined);
  };
  const point = io.env.RUNNER_MEDIC_TEST_HALT;
  const stale = Number(io.env.RUNNER_MEDIC_TEST_STALE_CLAIM_SECONDS);
  return {
    ...(point === 'before-result'
      ? { beforeResult: halt('before recording the result of an action') }
      : {}),
    ...(point === 'after-result'
      ? {
          afterAct: (action: { key: string }) =>
            halt('after recording the result of an action, before its audit event')(action.key),
        }
      : {}),
    ...(Number.isFinite(stale) && stale > 0 ? { staleClaimMs: stale * 1000 } : {}),
  };
}
