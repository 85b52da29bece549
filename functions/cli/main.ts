/**
 * `runner-medic`, the command-line tool: its commands and their options. functions/cli/entry.ts
 * runs it in the image; in a clone, package.json's `bin` (bin/runner-medic.mjs) runs it through
 * sandbox/cli.ts, which lends it the twins for `--sandbox`. docs/doctor.md describes the doctor.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import type { CheckResult } from '../doctor/doctor-check.js';
import { exitCodeOf, reportOf } from '../doctor/doctor-check.js';
import { runDoctor, storeClientConfig } from '../doctor/run-doctor.js';
import { DynamoFactsStore } from '../adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../config/compose-clients.js';
import { awsClients, engineFromEnvironment } from '../config/compose-engine.js';
import { loadSettings, SETTING_DEFAULTS } from '../config/settings.js';
import { systemClock } from '../ports/clock.js';
import type { Clock } from '../ports/clock.js';
import { RunnerMedicError } from '../ports/errors.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import { GithubUnavailableError } from '../ports/github-gateway.js';
import { formatTable } from './format-table.js';
import type { CliSandbox } from './cli-sandbox.js';
import { SandboxUnavailable } from './cli-sandbox.js';
import type { AuditRecord } from './replay.js';
import { formatReplay, parseAuditRecords, parseDuration, replayReport } from './replay.js';
import type { RescueOutcome } from './rescue.js';
import {
  formatRescue,
  parseRescueTarget,
  rescue,
  RescueError,
  RescueUnreachable,
} from './rescue.js';

const HELP = `runner-medic: rescues GitHub Actions jobs whose ARC runner pods die.

Usage: runner-medic <command> [options]

Commands:
  doctor      Checks the set-up: configuration, the GitHub App, each cluster, events;
              or, with --in-cluster, a serve deployment from inside one of its pods.
              Exit code 0 healthy, 1 findings, 2 something could not be reached.
  rescue      Decides now for one job, run or runner, with the engine's rules, policy and
              guardrails; prints what it would do and why; acts only with --yes.
              Exit code 0 done (or would act), 1 refused by a guardrail or nothing to do,
              2 something could not be reached.
  replay      Reports what runner-medic did, or would have done in dry run, per rule: how
              many jobs, how fast after the loss, what a guardrail held; from its audit
              trail (--events) or a scenario played in the sandbox (--sandbox).
  serve       Runs runner-medic in the cluster, with no AWS: informers on the cluster, the
              webhook on PORT, probes and metrics on PROBE_PORT, SQLite or DynamoDB, a Lease
              so that only one replica acts (docs/in-cluster.md). Exit code 0 after SIGTERM.
  help        Prints this text.

doctor options:
  --json              Print one JSON document { checks: [{ id, status, why, what }] }.
  --sandbox           Run against the embedded twins (GitHub and a cluster on loopback),
                      seeded with a few findings; nothing needs to be configured.
  --stage <stage>     Read the deployed parameters of this stage from SSM
                      (/runner-medic/<stage>/github-webhook-secret, github-app, policy);
                      CLUSTERS still comes from the environment.
  --queued-minutes <n>  A job queued longer than this is a finding (default 15).
  --repo <owner/name> Look for queued jobs in this repository (repeatable; default: every
                      repository the App is installed on).
  --in-cluster        Check runner-medic serve from inside one of its pods, with serve's
                      environment and the pod's credentials:
                        kubectl -n runner-medic exec deploy/runner-medic --
                          node /app/functions/cli/entry.mjs doctor --in-cluster
                      the Lease (held, fresh, who leads), the local replica's /readyz
                      (informers synced, store open), the store's volume (folder writable,
                      database opens, free space) and, by SelfSubjectAccessReview, every call
                      serve makes. Takes --json only.
  -h, --help          Prints this text.

rescue <job URL | run URL | cluster/namespace/runner> options:
  --yes               Do it (without: only say what it would do and why).
  --json              Print one JSON document { subjects, would, held, did, refused }.
  --stage <stage>     Read the deployed parameters of this stage, as doctor does.

replay options:
  --since <duration>  How far back: 7d, 24h, 90m (default 7d).
  --json              Print one JSON document { since, until, rules: [...] }.
  --events <file>     The audit trail: JSON lines (or an array) of runner-medic's events, as
                      the audit log group or an EventBridge archive holds them.
  --sandbox           Play the second seed scenario (Karpenter mid-job) with the twins in
                      dry run, then replay what runner-medic would have done.
  --scenario <file>   With --sandbox: play this scenario instead.
  --stage <stage>     Read the store of this stage (TABLE_NAME runner-medic-<stage>).
  Without --events or --sandbox, the audit trail is read from the store (TABLE_NAME): each
  action's audit event is kept with it for 35 days.

serve options:
  --sandbox --once    Play a scenario (SANDBOX_SCENARIO, by default the Karpenter seed) through
                      serve's runtime on the twins: informers and the Lease on the Kubernetes
                      twin, webhooks from the GitHub twin, SQLite in a temporary folder, paced at
                      SANDBOX_SPEED; narrate it on stderr, audit events as JSON lines on stdout,
                      and exit 0 when every job the scenario expects recovered, 1 when not.
  --scenario <file>   With --sandbox: play this scenario instead.

The commands read the same environment as the functions (README, Configuration).
`;

/** The command line is wrong: runner-medic says why and how to ask for help (exit code 64). */
class UsageError extends RunnerMedicError {
  constructor(message: string) {
    super('config', message);
    this.name = 'UsageError';
  }
}

/** The options every command takes. */
const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  stage: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The environment with a stage's deployed parameter names (serverless.yml) where it sets none. */
export function stageEnvironment(
  env: Record<string, string | undefined>,
  stage: string,
): Record<string, string | undefined> {
  if (!/^[a-zA-Z0-9-]+$/.test(stage)) throw new UsageError(`--stage: not a stage name: ${stage}`);
  const set = (name: string) =>
    [name, `${name}_PARAMETER`, `${name}_ARN`].some((n) => (env[n] ?? '').trim() !== '');
  return {
    ...env,
    TABLE_NAME: env.TABLE_NAME ?? `runner-medic-${stage}`,
    ...(set('GITHUB_WEBHOOK_SECRET')
      ? {}
      : { GITHUB_WEBHOOK_SECRET_PARAMETER: `/runner-medic/${stage}/github-webhook-secret` }),
    ...(set('GITHUB_APP_CREDENTIALS')
      ? {}
      : { GITHUB_APP_CREDENTIALS_PARAMETER: `/runner-medic/${stage}/github-app` }),
    ...(env.POLICY || env.POLICY_FILE || env.POLICY_PARAMETER
      ? {}
      : { POLICY_PARAMETER: `/runner-medic/${stage}/policy` }),
  };
}

async function doctor(args: string[], io: CliIo, seams: CliSeams): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...COMMON_OPTIONS,
      sandbox: { type: 'boolean', default: false },
      'in-cluster': { type: 'boolean', default: false },
      'queued-minutes': { type: 'string' },
      repo: { type: 'string', multiple: true },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (values.sandbox && values.stage)
    throw new UsageError('--sandbox and --stage exclude each other');
  const queuedMinutes =
    values['queued-minutes'] === undefined ? undefined : Number(values['queued-minutes']);
  if (queuedMinutes !== undefined && !(Number.isInteger(queuedMinutes) && queuedMinutes > 0))
    throw new UsageError('--queued-minutes: a whole number of minutes above 0');
  for (const repo of values.repo ?? [])
    if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new UsageError(`--repo: not owner/name: ${repo}`);
  if (values['in-cluster']) {
    const others = ['sandbox', 'stage', 'queued-minutes', 'repo'] as const;
    const given = others.filter((o) => values[o] !== undefined && values[o] !== false);
    if (given.length > 0)
      throw new UsageError(`--in-cluster takes only --json (not --${given.join(', --')})`);
    const { runInClusterDoctor } = await import('../doctor/in-cluster-checks.js');
    const checks = await runInClusterDoctor({ env: io.env, clock: seams.clock ?? systemClock });
    printDoctorReport(checks, values.json, io);
    return exitCodeOf(checks);
  }

  let env = values.stage ? stageEnvironment(io.env, values.stage) : io.env;
  let clock: Clock = systemClock;
  let repositories = values.repo;
  let stop: (() => Promise<void>) | undefined;
  if (values.sandbox) {
    if (!seams.sandbox) throw new SandboxUnavailable('doctor');
    const sandbox = await seams.sandbox.startDoctor();
    env = sandbox.env;
    clock = sandbox.clock;
    repositories ??= sandbox.repositories;
    stop = sandbox.stop;
    if (!values.json)
      io.err(
        'doctor: sandbox: a GitHub twin and a cluster twin on loopback, seeded with a few findings\n',
      );
  }
  let checks: CheckResult[];
  try {
    const aws = awsClients(clock);
    checks = await runDoctor({
      env,
      clock,
      secretClients: aws,
      eks: aws.eks,
      ...(queuedMinutes !== undefined ? { queuedMinutes } : {}),
      ...(repositories ? { repositories } : {}),
    });
  } finally {
    await stop?.();
  }
  printDoctorReport(checks, values.json, io);
  return exitCodeOf(checks);
}

function printDoctorReport(checks: CheckResult[], json: boolean, io: CliIo): void {
  io.out(json ? `${JSON.stringify(reportOf(checks), null, 2)}\n` : `${formatTable(checks)}\n`);
}

async function serveCommand(args: string[], io: CliIo, seams: CliSeams): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      help: COMMON_OPTIONS.help,
      sandbox: { type: 'boolean', default: false },
      once: { type: 'boolean', default: false },
      scenario: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (values.sandbox !== values.once)
    throw new UsageError('--sandbox and --once go together: serve --sandbox --once');
  if (values.scenario !== undefined && !values.sandbox)
    throw new UsageError('--scenario needs --sandbox --once');
  if (!values.sandbox) {
    const { runServe } = await import('../serve/serve-process.js');
    return runServe({ env: io.env, out: { write: io.out }, err: io.err });
  }
  if (!seams.sandbox) throw new SandboxUnavailable('serve');
  const local = loadSettings({ ...io.env, SANDBOX: 'on' }, 'local');
  const result = await seams.sandbox.playServe({
    file: values.scenario ?? local.sandbox?.scenario ?? SETTING_DEFAULTS.SANDBOX_SCENARIO,
    speed: local.sandbox?.speed ?? SETTING_DEFAULTS.SANDBOX_SPEED,
    write: io.err,
    sink: io.out,
  });
  return result.recovered ? 0 : 1;
}

/** What tests replace: the engine the functions would build from the environment. */
export interface CliSeams {
  engine?: (env: Record<string, string | undefined>, clock: Clock) => Promise<EngineDeps>;
  /**
   * The engine's clock, and `doctor --in-cluster`'s (a scenario's simulated clock in tests).
   * @default the system clock
   */
  clock?: Clock;
  /** The twins behind `--sandbox`, lent by a clone's launcher (sandbox/cli.ts); none in the image. */
  sandbox?: CliSandbox;
}

/** The engine as the functions build it (functions/config/compose-engine.ts), logging to stderr. */
async function engineFrom(
  env: Record<string, string | undefined>,
  clock: Clock,
  io: CliIo,
): Promise<EngineDeps> {
  const { deps } = await engineFromEnvironment(env, awsClients(clock))(() => 60_000);
  const verbose = env.RUNNER_MEDIC_VERBOSE === 'true';
  const line = (level: string) => (message: string, fields?: object) => {
    if (verbose || level === 'warn')
      io.err(`${level}: ${message} ${JSON.stringify(fields ?? {})}\n`);
  };
  return {
    ...deps,
    log: { info: line('info'), warn: line('warn') },
    metrics: { count: () => undefined, milliseconds: () => undefined },
  };
}

async function rescueCommand(args: string[], io: CliIo, seams: CliSeams): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...COMMON_OPTIONS,
      yes: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError('rescue takes one job URL, run URL or cluster/namespace/runner');
  const text = positionals[0] ?? '';
  const target = parseRescueTarget(text);
  if (typeof target === 'string') throw new UsageError(target);
  const env = values.stage ? stageEnvironment(io.env, values.stage) : io.env;
  const deps = await (seams.engine ?? ((e, c) => engineFrom(e, c, io)))(
    env,
    seams.clock ?? systemClock,
  );
  let outcome: RescueOutcome;
  try {
    outcome = await rescue(target, { yes: values.yes }, deps);
  } catch (error) {
    if (error instanceof RescueError) {
      io.err(`runner-medic rescue: ${error.message}\n`);
      return 1;
    }
    if (error instanceof RescueUnreachable || error instanceof GithubUnavailableError) {
      io.err(`runner-medic rescue: cannot reach: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  io.out(
    values.json ? `${JSON.stringify(outcome, null, 2)}\n` : formatRescue(text, outcome, values.yes),
  );
  const failed = (outcome.did ?? []).some((d) => d.outcome === 'failed');
  return outcome.refused === null && !failed ? 0 : 1;
}

/** The most audit events replay reads from the store (a week of a busy org is far fewer). */
const REPLAY_MAX_RECORDS = 50_000;

async function replayCommand(args: string[], io: CliIo, seams: CliSeams): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...COMMON_OPTIONS,
      since: { type: 'string', default: '7d' },
      events: { type: 'string' },
      sandbox: { type: 'boolean', default: false },
      scenario: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const window = parseDuration(values.since);
  if (typeof window === 'string') throw new UsageError(`--since: ${window}`);
  if (values.sandbox && values.events)
    throw new UsageError('--sandbox and --events exclude each other');
  let records: AuditRecord[];
  let since: number;
  let until: number;
  if (values.sandbox) {
    if (!seams.sandbox) throw new SandboxUnavailable('replay');
    // The played functions' metrics would go to stdout as EMF lines (as npm start, silenced).
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
    if (!values.json)
      io.err(
        `replay: sandbox: playing ${values.scenario ? relative(process.cwd(), values.scenario) : 'the Karpenter seed'} in dry run with the twins (about a minute)\n`,
      );
    ({ records, since, until } = await seams.sandbox.playReplay(values.scenario));
  } else if (values.events) {
    records = parseAuditRecords(await readFile(values.events, 'utf8'));
    until = Math.max(Date.now(), ...records.map((r) => r.at));
    since = until - window;
  } else {
    // The store keeps each action's audit event with it (35 days), indexed by day.
    const env = values.stage ? stageEnvironment(io.env, values.stage) : io.env;
    const tableName = env.TABLE_NAME;
    if (!tableName) {
      io.err(
        'runner-medic replay: no store: set TABLE_NAME (or --stage), or pass --events <file> ' +
          '(JSON lines of the audit log group, or an EventBridge archive) or --sandbox\n',
      );
      return 2;
    }
    until = Date.now();
    since = until - window;
    const store = new DynamoFactsStore(
      createDocumentClient(storeClientConfig(env.DYNAMODB_ENDPOINT)),
      tableName,
    );
    try {
      records = await store.auditTrail(since, until, REPLAY_MAX_RECORDS);
    } catch (error) {
      io.err(`runner-medic replay: could not read the store: ${(error as Error).message}\n`);
      return 2;
    }
  }
  const report = replayReport(records, since, until);
  io.out(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReplay(report));
  return 0;
}

/** Runs one command line; returns the exit code (64 for a usage error, as sysexits' EX_USAGE). */
export async function runCli(argv: string[], io: CliIo, seams: CliSeams = {}): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '-h':
      case '--help':
        io.out(HELP);
        return 0;
      case 'doctor':
        return await doctor(rest, io, seams);
      case 'rescue':
        return await rescueCommand(rest, io, seams);
      case 'replay':
        return await replayCommand(rest, io, seams);
      case 'serve':
        return await serveCommand(rest, io, seams);
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } catch (error) {
    if (
      error instanceof UsageError ||
      String((error as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS')
    ) {
      io.err(`runner-medic: ${(error as Error).message}\nTry: runner-medic --help\n`);
      return 64;
    }
    if (error instanceof SandboxUnavailable) {
      io.err(`runner-medic: ${error.message}\n`);
      return 69;
    }
    throw error;
  }
}
