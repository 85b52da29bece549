/**
 * Stand-ins for the processes of the official runner image, written to a temporary folder at test
 * time, for driving infra/kubernetes/runner/graceful-stop.sh for real.
 *
 * They mirror the image's tree (actions/runner src/Misc/layoutroot/run.sh and
 * run-helper.sh.template; images/Dockerfile sets RUNNER_MANUALLY_TRAP_SIG=1):
 *   run.sh            starts run-helper.sh in its own process group (job control) and turns SIGINT
 *                     or SIGTERM into a SIGINT to that group; exits with the helper's status.
 *   run-helper.sh     optionally waits first (the image waits for docker there), then runs
 *                     Runner.Listener in the foreground and exits with its status.
 *   Runner.Listener   starts a Runner.Worker per planned job, in its own process group (as .NET's
 *                     Process.Start does) or a new one; on SIGINT it starts no more jobs and exits
 *                     once its workers have.
 *   Runner.Worker     runs for a given time, or until a file appears; on SIGINT it cancels (exit 130).
 * The file names are exactly the image's process names, so pgrep finds them as it would there.
 * Each stand-in appends `<epoch µs> <name> <pid> <event>` to STANDIN_RECORD for every start,
 * signal and exit.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const record = (name: string) =>
  `record() { printf '%s %s %s %s\\n' "\${EPOCHREALTIME//[!0-9]/}" '${name}' "$$" "$*" >>"$STANDIN_RECORD"; }`;

const RUN_SH = `#!/bin/bash
dir="$(cd "$(dirname "$0")" && pwd)"
${record('run.sh')}
helper=''
on_signal() {
  record "$1"
  [[ -z "$helper" ]] || kill -s INT -- "-$helper" 2>/dev/null
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
record start "$@"
echo 'run.sh stand-in: started'
set -m
"$dir/run-helper.sh" "$@" &
helper=$!
set +m
while :; do
  wait "$helper"
  code=$?
  kill -0 "$helper" 2>/dev/null || break
done
record "exit $code"
exit "$code"
`;

const RUN_HELPER_SH = `#!/bin/bash
dir="$(cd "$(dirname "$0")" && pwd)"
${record('run-helper.sh')}
record start
if [[ -n "\${STANDIN_NO_LISTENER:-}" ]]; then
  while :; do sleep 0.1; done
fi
if [[ -n "\${STANDIN_LISTENER_DELAY:-}" ]]; then
  sleep "$STANDIN_LISTENER_DELAY"
fi
"$dir/Runner.Listener" "$@"
code=$?
record "exit $code"
exit "$code"
`;

const LISTENER = `#!/bin/bash
dir="$(cd "$(dirname "$0")" && pwd)"
${record('Runner.Listener')}
stopping=0
trap 'record INT; stopping=1' INT
trap 'record TERM; exit 143' TERM
record start
elapsed_ms() { local us="\${EPOCHREALTIME//[!0-9]/}"; echo $(((10#$us - 10#$t0) / 1000)); }
t0="\${EPOCHREALTIME//[!0-9]/}"
# STANDIN_JOBS: comma-separated <start>:<length>. A start is milliseconds from the listener's start,
# or file=<name>: once that file exists in this folder. A length is milliseconds, or file=<name>:
# until that file exists.
IFS=',' read -r -a jobs <<<"\${STANDIN_JOBS:-}"
due() {
  if [[ "$1" == file=* ]]; then [[ -e "$dir/\${1#file=}" ]]; else (($(elapsed_ms) >= $1)); fi
}
declare -A started=()
workers=()
while :; do
  pending=0
  for i in "\${!jobs[@]}"; do
    job="\${jobs[$i]}"
    [[ -n "$job" && -z "\${started[$i]:-}" ]] || continue
    if ((stopping == 0)) && due "\${job%%:*}"; then
      [[ -z "\${STANDIN_WORKER_OWN_GROUP:-}" ]] || set -m
      # bash ignores SIGINT in background children; the runner's .NET Process.Start does not.
      env --default-signal=INT "$dir/Runner.Worker" "\${job#*:}" &
      workers+=("$!")
      set +m
      started[$i]=1
    elif ((stopping == 0)); then
      pending=1
    fi
  done
  running=0
  for w in "\${workers[@]}"; do
    if kill -0 "$w" 2>/dev/null; then running=1; fi
  done
  ((stopping == 0 || running == 1)) || break
  if [[ -n "\${STANDIN_EPHEMERAL:-}" ]] && ((\${#workers[@]} > 0 && running == 0 && pending == 0)); then
    break
  fi
  sleep 0.05
done
code="\${STANDIN_LISTENER_EXIT_CODE:-0}"
record "exit $code"
exit "$code"
`;

const WORKER = `#!/bin/bash
${record('Runner.Worker')}
sleeper=''
on_int() {
  record INT
  [[ -z "$sleeper" ]] || kill "$sleeper" 2>/dev/null
  record 'exit 130'
  exit 130
}
trap on_int INT
trap 'record TERM; exit 143' TERM
record start "$1"
if [[ "$1" == file=* ]]; then
  release="$(dirname "$0")/\${1#file=}"
  until [[ -e "$release" ]]; do sleep 0.05; done
else
  sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))" &
  sleeper=$!
  wait "$sleeper"
fi
record 'exit 0'
exit 0
`;

export interface RecordLine {
  /** Epoch milliseconds. */
  at: number;
  name: 'run.sh' | 'run-helper.sh' | 'Runner.Listener' | 'Runner.Worker';
  pid: number;
  event: string;
}

export interface StandIns {
  dir: string;
  recordFile: string;
  runSh: string;
  listener: string;
  records(): RecordLine[];
}

export function writeStandIns(): StandIns {
  const dir = mkdtempSync(join(tmpdir(), 'graceful-stop-'));
  const files: Record<string, string> = {
    'run.sh': RUN_SH,
    'run-helper.sh': RUN_HELPER_SH,
    'Runner.Listener': LISTENER,
    'Runner.Worker': WORKER,
  };
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, 0o755);
  }
  const recordFile = join(dir, 'record.txt');
  writeFileSync(recordFile, '');
  return {
    dir,
    recordFile,
    runSh: join(dir, 'run.sh'),
    listener: join(dir, 'Runner.Listener'),
    records: () => parseRecords(readFileSync(recordFile, 'utf8')),
  };
}

function parseRecords(text: string): RecordLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [micros, name, pid, ...event] = line.split(' ');
      return {
        at: Number(micros) / 1000,
        name: name as RecordLine['name'],
        pid: Number(pid),
        event: event.join(' '),
      };
    });
}
