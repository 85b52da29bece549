/**
 * infra/kubernetes/runner/graceful-stop.sh, run for real against stand-in runner processes (see
 * runner-stand-ins.ts). Each case waits for the stand-ins to reach a state (read from their
 * record file), sends SIGTERM and checks the exit status, which process got which signal, in what
 * order, and generous bounds on when. The timeouts are short so the suite stays quick; the bounds
 * are wide because the machine running it may be busy.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeStandIns, type RecordLine, type StandIns } from './runner-stand-ins.js';

const SCRIPT = resolve('infra/kubernetes/runner/graceful-stop.sh');

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

interface Wrapper {
  child: ChildProcess;
  output: () => string;
  log: () => string;
  exited: Promise<Exit>;
  terminate: () => number;
}

let standIns: StandIns;
let running: Wrapper | undefined;

beforeEach(() => {
  standIns = writeStandIns();
});

afterEach(() => {
  // Leave nothing behind, whatever the test did.
  if (running?.child.exitCode === null) running.child.kill('SIGKILL');
  for (const pid of new Set(standIns.records().map((r) => r.pid))) {
    // Only a stand-in still running from this test's folder: a finished one's pid may be reused.
    if (commandLineOf(pid)?.includes(standIns.dir)) process.kill(pid, 'SIGKILL');
  }
  running = undefined;
  rmSync(standIns.dir, { recursive: true, force: true });
});

function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined; // gone
  }
}

function start(env: Record<string, string>, args: string[] = ['--jitconfig', 'abc']): Wrapper {
  const child = spawn(SCRIPT, args, {
    env: {
      ...process.env,
      RUNNER_ENTRYPOINT: standIns.runSh,
      STANDIN_RECORD: standIns.recordFile,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'exit', not 'close': a stand-in left running would hold the output pipes open. The output is
  // read up to 'close' or half a second after 'exit', whichever comes first.
  const closed = new Promise<void>((done) => child.on('close', () => done()));
  const exited = new Promise<Exit>((done) =>
    child.on('exit', (code, signal) => {
      const at = Date.now();
      void Promise.race([closed, new Promise((r) => setTimeout(r, 500))]).then(() =>
        done({ code, signal, at }),
      );
    }),
  );
  running = {
    child,
    output: () => stdout,
    log: () => stderr,
    exited,
    terminate: () => {
      const at = Date.now();
      child.kill('SIGTERM');
      return at;
    },
  };
  return running;
}

/** Polls the stand-ins' record until a line matches; fails after `withinMs`. */
async function recorded(
  match: (line: RecordLine) => boolean,
  withinMs = 15_000,
): Promise<RecordLine> {
  const until = Date.now() + withinMs;
  for (;;) {
    const hit = standIns.records().find(match);
    if (hit) return hit;
    if (Date.now() > until) {
      throw new Error(
        `no matching record within ${withinMs} ms:\n${JSON.stringify(standIns.records(), null, 1)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls the script's own log until it matches; fails after `withinMs`. */
async function logged(w: Wrapper, pattern: RegExp, withinMs = 15_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!pattern.test(w.log())) {
    if (Date.now() > until) throw new Error(`log never matched ${pattern}:\n${w.log()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const is =
  (name: RecordLine['name'], event: string) =>
  (line: RecordLine): boolean =>
    line.name === name && (line.event === event || line.event.startsWith(`${event} `));

function touch(name: string): void {
  writeFileSync(join(standIns.dir, name), '');
}

function eventsOf(name: RecordLine['name']): string[] {
  return standIns
    .records()
    .filter((r) => r.name === name)
    .map((r) => r.event.split(' ')[0] ?? '');
}

function find(name: RecordLine['name'], event: string): RecordLine {
  const hit = standIns.records().find(is(name, event));
  if (!hit)
    throw new Error(`${name} never recorded ${event}: ${JSON.stringify(standIns.records())}`);
  return hit;
}

describe('graceful-stop.sh', () => {
  it('runs the start command with its arguments, forwards its output and exits with its status', async () => {
    const w = start({
      STANDIN_JOBS: '0:200',
      STANDIN_EPHEMERAL: '1',
      STANDIN_LISTENER_EXIT_CODE: '5',
    });

    const exit = await w.exited;

    expect(exit.code).toBe(5);
    expect(w.output()).toContain('run.sh stand-in: started');
    expect(find('run.sh', 'start').event).toBe('start --jitconfig abc');
    expect(standIns.records().filter((r) => r.event === 'INT')).toEqual([]);
  });

  it('idle: sends SIGINT to the listener and exits with the runner status soon after it exits', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '30', STANDIN_LISTENER_EXIT_CODE: '3' });
    await recorded(is('Runner.Listener', 'start'));

    const termAt = w.terminate();
    const exit = await w.exited;

    expect(exit.code).toBe(3);
    expect(eventsOf('Runner.Listener')).toEqual(['start', 'INT', 'exit']);
    const listenerExit = find('Runner.Listener', 'exit');
    expect(listenerExit.at - termAt).toBeLessThan(10_000);
    expect(exit.at - listenerExit.at).toBeLessThan(5_000);
    expect(w.log()).toMatch(/Z graceful-stop: no job running/);
    expect(w.log()).toMatch(/Z graceful-stop: SIGINT to Runner\.Listener \d+/);
  });

  it('a job that finishes inside the timeout completes untouched; then the listener is stopped', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '60', STANDIN_JOBS: '0:file=job-done' });
    await recorded(is('Runner.Worker', 'start'));

    w.terminate();
    await logged(w, /a job is running/);
    w.child.kill('SIGTERM'); // a second SIGTERM changes nothing
    await logged(w, /already stopping/);
    touch('job-done');
    const exit = await w.exited;

    expect(exit.code).toBe(0);
    expect(eventsOf('Runner.Worker')).toEqual(['start', 'exit']);
    expect(find('Runner.Worker', 'exit').event).toBe('exit 0');
    expect(eventsOf('Runner.Listener')).toEqual(['start', 'INT', 'exit']);
    expect(find('Runner.Listener', 'INT').at).toBeGreaterThan(find('Runner.Worker', 'exit').at);
    expect(w.log()).not.toContain('RUNNER_GRACEFUL_STOP_TIMEOUT');
  });

  it('a job that outlives the timeout: SIGINT to the worker process group after the timeout, never before', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '2', STANDIN_JOBS: '0:120000' });
    const worker = await recorded(is('Runner.Worker', 'start'));

    const termAt = w.terminate();
    const exit = await w.exited;

    // run.sh ends with the listener's status (0) once the cancelled job has wound up.
    expect(exit.code).toBe(0);
    const workerInt = find('Runner.Worker', 'INT');
    expect(workerInt.pid).toBe(worker.pid);
    expect(workerInt.at - termAt).toBeGreaterThanOrEqual(1_900);
    expect(workerInt.at - termAt).toBeLessThan(15_000);
    expect(find('Runner.Worker', 'exit').event).toBe('exit 130');
    // The image starts the worker in the listener's process group: one SIGINT reaches both.
    expect(eventsOf('Runner.Listener')).toEqual(['start', 'INT', 'exit']);
    expect(w.log()).toMatch(/SIGINT to process group \d+ of Runner\.Worker \d+/);
  });

  it('a worker in its own process group: SIGINT to that group first, then to the listener', async () => {
    const w = start({
      RUNNER_GRACEFUL_STOP_TIMEOUT: '1',
      STANDIN_JOBS: '0:120000',
      STANDIN_WORKER_OWN_GROUP: '1',
    });
    await recorded(is('Runner.Worker', 'start'));

    w.terminate();
    const exit = await w.exited;

    expect(exit.code).toBe(0);
    expect(find('Runner.Listener', 'INT').at).toBeGreaterThanOrEqual(
      find('Runner.Worker', 'INT').at,
    );
    expect(w.log()).toMatch(/SIGINT to Runner\.Listener \d+/);
  });

  it('a worker that starts during the wait is waited for too', async () => {
    // Job 1 runs until release-1 exists; job 2 starts once start-2 exists and runs until release-2.
    const w = start({
      RUNNER_GRACEFUL_STOP_TIMEOUT: '60',
      STANDIN_JOBS: '0:file=release-1,file=start-2:file=release-2',
    });
    const first = await recorded(is('Runner.Worker', 'start'));
    w.terminate();
    await logged(w, /a job is running/);

    touch('start-2');
    const second = await recorded((r) => is('Runner.Worker', 'start')(r) && r.pid !== first.pid);
    await logged(
      w,
      new RegExp(`Runner\\.Worker ${second.pid} started during the wait: waiting for it too`),
    );
    touch('release-1');
    const firstExit = await recorded((r) => r.pid === first.pid && r.event === 'exit 0');
    // Longer than the 1 s the script watches for another job once none is left.
    await new Promise((r) => setTimeout(r, Math.max(0, firstExit.at + 2_000 - Date.now())));
    const listenerBeforeRelease = eventsOf('Runner.Listener');
    touch('release-2');
    const exit = await w.exited;

    expect(listenerBeforeRelease).toEqual(['start']);
    expect(exit.code).toBe(0);
    const workers = standIns.records().filter((r) => r.name === 'Runner.Worker');
    expect(
      workers
        .filter((r) => r.event === 'exit 0')
        .map((r) => r.pid)
        .sort(),
    ).toEqual([first.pid, second.pid].sort());
    expect(workers.filter((r) => r.event === 'INT')).toEqual([]);
    expect(find('Runner.Listener', 'INT').at).toBeGreaterThan(
      (workers.find((r) => r.pid === second.pid && r.event === 'exit 0') as RecordLine).at,
    );
  });

  it('listener only (the start command is the listener itself): SIGINT to it, its status', async () => {
    const w = start({
      RUNNER_ENTRYPOINT: standIns.listener,
      RUNNER_GRACEFUL_STOP_TIMEOUT: '30',
      STANDIN_LISTENER_EXIT_CODE: '4',
    });
    await recorded(is('Runner.Listener', 'start'));

    w.terminate();
    const exit = await w.exited;

    expect(exit.code).toBe(4);
    expect(eventsOf('Runner.Listener')).toEqual(['start', 'INT', 'exit']);
  });

  it('no listener at all: exits at once with a clear message and the start command status', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '60', STANDIN_NO_LISTENER: '1' });
    await recorded(is('run-helper.sh', 'start'));

    const termAt = w.terminate();
    const exit = await w.exited;

    expect(exit.at - termAt).toBeLessThan(10_000);
    expect(w.log()).toContain('no Runner.Listener process, so no job can be running');
    const runShExit = find('run.sh', 'exit');
    expect(exit.code).toBe(Number(runShExit.event.split(' ')[1]));
    expect(eventsOf('Runner.Listener')).toEqual([]);
  });

  it('SIGTERM before the listener has started: the runner is stopped and no listener ever starts', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '60', STANDIN_LISTENER_DELAY: '5' });
    const helper = await recorded(is('run-helper.sh', 'start'));

    w.terminate();
    const exit = await w.exited;
    // Past the moment the listener would have started.
    await new Promise((r) => setTimeout(r, Math.max(0, helper.at + 5_500 - Date.now())));

    expect(exit.code).not.toBe(0);
    expect(exit.code).toBe(Number(find('run.sh', 'exit').event.split(' ')[1]));
    expect(eventsOf('Runner.Listener')).toEqual([]);
    expect(w.log()).toContain('no Runner.Listener process');
  });

  it('refuses a timeout that is not a whole number of seconds, and does not start the runner', async () => {
    const w = start({ RUNNER_GRACEFUL_STOP_TIMEOUT: '10m' });

    const exit = await w.exited;

    expect(exit.code).toBe(64);
    expect(w.log()).toContain('RUNNER_GRACEFUL_STOP_TIMEOUT must be a whole number of seconds');
    expect(standIns.records()).toEqual([]);
  });

  it('refuses a start command that is not executable', async () => {
    const w = start({ RUNNER_ENTRYPOINT: join(standIns.dir, 'missing.sh') });

    const exit = await w.exited;

    expect(exit.code).toBe(127);
    expect(w.log()).toContain('is not an executable file');
  });

  it('refuses to start the runner without pgrep, which it needs to find running jobs', async () => {
    const bin = join(standIns.dir, 'bin-without-pgrep');
    mkdirSync(bin);
    for (const tool of ['date', 'sleep', 'env', 'rm']) {
      const found = spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
      symlinkSync(found.stdout.trim(), join(bin, tool));
    }
    const w = start({ PATH: bin });

    const exit = await w.exited;

    expect(exit.code).toBe(127);
    expect(w.log()).toContain('pgrep (procps) is not installed');
    expect(standIns.records()).toEqual([]);
  });

  it('keeps RUNNER_ALIVE_FILE while the runner runs and removes it on exit', async () => {
    const alive = join(standIns.dir, 'runner.alive');
    const w = start({ RUNNER_ALIVE_FILE: alive });
    await recorded(is('Runner.Listener', 'start'));
    expect(existsSync(alive)).toBe(true);

    w.terminate();
    await w.exited;

    expect(existsSync(alive)).toBe(false);
  });
});
