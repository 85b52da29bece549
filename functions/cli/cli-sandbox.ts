/**
 * What `--sandbox` needs and the product does not carry: the twins (sim/) and the wiring that
 * plays a scenario through runner-medic (sandbox/). A clone's launcher (bin/runner-medic.mjs)
 * lends them to the CLI; the container image and the Lambda bundles are built without them, and
 * there `--sandbox` says so.
 */
import type { Clock } from '../ports/clock.js';
import { RunnerMedicError } from '../ports/errors.js';
import type { AuditRecord } from './replay.js';

export interface CliSandbox {
  /** `doctor --sandbox`: the twins on loopback, seeded with a few findings. */
  startDoctor(): Promise<{
    env: Record<string, string>;
    clock: Clock;
    repositories: string[];
    stop(): Promise<void>;
  }>;
  /** `serve --sandbox --once`: a scenario played through serve's in-cluster runtime. */
  playServe(options: {
    file: string;
    speed: number;
    write: (text: string) => void;
    sink: (text: string) => void;
  }): Promise<{ recovered: boolean }>;
  /** `replay --sandbox`: a scenario played in dry run, and the audit trail it left. */
  playReplay(file: string | undefined): Promise<{
    records: AuditRecord[];
    since: number;
    until: number;
  }>;
}

/** `--sandbox` in a build without the twins (exit code 69, sysexits' EX_UNAVAILABLE). */
export class SandboxUnavailable extends RunnerMedicError {
  constructor(command: string) {
    super(
      'config',
      `${command} --sandbox plays runner-medic against its twins, which are not part of this ` +
        'build (the container image and the Lambda bundles ship without them). Run it from a ' +
        `clone of the repository, after npm ci: npx runner-medic ${command} --sandbox`,
    );
    this.name = 'SandboxUnavailable';
  }
}
