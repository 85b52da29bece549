/**
 * How a runner pod's runner behaves on SIGTERM and at start, read from the scale set's settings,
 * the pod spec and the runner image's version.
 */
import { isBelow } from '../../runner-version.js';
import type { Pod } from '../types.js';
import type { RunnerBehaviour, SigtermBehaviour } from './runner-process.js';

/** Per scale set runner settings (`<namespace>/<scale set>`), over what the pod spec says. */
export interface RunnerSettings {
  onSigterm?: SigtermBehaviour;
  stopTimeoutSeconds?: number;
}

/** `2.328.0` < `2.329.0`; a tag that is not a version (`latest`) is never below. */
export function versionBelow(version: string | undefined, minimum: string | undefined): boolean {
  return !!version && !!minimum && isBelow(version, minimum);
}

/**
 * How a pod's runner behaves: explicit per-scale-set settings first, else what its spec says
 * (a `graceful-stop.sh` command or argument selects graceful-stop, its RUNNER_GRACEFUL_STOP_TIMEOUT
 * env the timeout), else the runner's own handling. The image tag is the runner version.
 */
export function runnerBehaviourFor(
  pod: Pod,
  settings: RunnerSettings | undefined,
  minimumRunnerVersion: string | undefined,
): RunnerBehaviour {
  const runner = pod.spec.containers.find((c) => c.name === 'runner');
  const words = [...(runner?.command ?? []), ...(runner?.args ?? [])].join(' ');
  const fromSpec: SigtermBehaviour = /graceful-stop/.test(words) ? 'graceful-stop' : 'default';
  const envTimeout = runner?.env?.find((e) => e.name === 'RUNNER_GRACEFUL_STOP_TIMEOUT')?.value;
  const seconds =
    settings?.stopTimeoutSeconds ?? (envTimeout !== undefined ? Number(envTimeout) : undefined);
  const tag = typeof runner?.image === 'string' ? runner.image.split(':')[1] : undefined;
  return {
    onSigterm: settings?.onSigterm ?? fromSpec,
    ...(seconds !== undefined && Number.isFinite(seconds) ? { stopTimeoutMs: seconds * 1000 } : {}),
    ...(versionBelow(tag, minimumRunnerVersion) ? { deprecated: true } : {}),
  };
}
