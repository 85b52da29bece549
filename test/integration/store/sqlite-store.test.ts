import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openSqliteStores } from '../../../functions/adapters/store/sqlite-stores.js';
import { rerunKilledJob } from '../../../functions/domain/decide/rules/rerun-killed-job.js';
import type { Action } from '../../../functions/domain/model/action.js';
import type { GithubObservation } from '../../../functions/domain/model/observation.js';
import { StoreError, type DeliveryRecord } from '../../../functions/ports/delivery-ledger.js';

/**
 * What the SQLite store adds to the store contract (contract/): several connections and
 * processes on one file never both win a claim; a store that cannot be opened says so and is
 * never used; expired rows are purged.
 */
const T0 = Date.parse('2026-03-01T12:00:00Z');
const clock = { now: () => T0 };
let folder: string;
beforeAll(() => (folder = mkdtempSync(join(tmpdir(), 'runner-medic-sqlite-'))));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const file = (name: string) => join(folder, `${name}.db`);

function action(key: string): Action {
  return {
    key,
    rule: rerunKilledJob.id,
    target: {
      kind: 'rerun-failed-jobs',
      repo: 'acme/api',
      installationId: 7,
      runId: 1,
      runAttempt: 1,
      jobIds: [1],
    },
    scope: {
      cluster: 'prod',
      namespace: 'arc',
      scaleSet: 'arc-linux',
      repo: 'acme/api',
      runnerName: null,
      jobUrl: null,
    },
    cause: null,
    signal: null,
    reason: 'test',
    dryRun: false,
    budgetKeys: [],
  };
}

interface Won {
  actions: string[];
  deliveries: string[];
  bodies: string[];
  passes: number;
}

/** Starts the race child on `path`; resolves once it has said `ready` (READY or HOLDING). */
function child(
  setup: Record<string, unknown>,
  ready: string,
): Promise<{
  process: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/integration/store/sqlite-race-child.ts'],
    {
      env: { ...process.env, NODE_OPTIONS: '', SQLITE_RACE_SETUP: JSON.stringify(setup) },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      const before = out;
      out += chunk.toString();
      if (!before.includes(`${ready}\n`) && out.includes(`${ready}\n`))
        resolve({ process: proc, output: () => out, exited });
    });
    void exited.then((code) => {
      if (!out.includes(`${ready}\n`)) reject(new Error(`child exited ${code}: ${err}`));
    });
  });
}

describe('SQLite store: one file, several writers', () => {
  it('two connections on one file see each other’s claims, and one claim wins', async () => {
    const a = openSqliteStores(file('two-connections'), clock);
    const b = openSqliteStores(file('two-connections'), clock);
    try {
      expect(await a.facts.claimAction(action('k1'), T0, 60_000)).toEqual({
        claimed: true,
        previous: null,
      });
      expect(await b.facts.claimAction(action('k1'), T0 + 1, 60_000)).toMatchObject({
        claimed: false,
        existing: { key: 'k1', outcome: 'claimed', claimedAt: T0 },
      });
      await b.facts.finishAction('k1', 'succeeded', T0 + 2, 'done');
      expect(await a.facts.claimAction(action('k1'), T0 + 120_000, 60_000)).toMatchObject({
        claimed: false,
        existing: { outcome: 'succeeded', finishedAt: T0 + 2 },
      });

      const record = {
        deliveryId: 'd-1',
        event: 'workflow_job',
        observation: { kind: 'job' } as unknown as GithubObservation,
        bodyDigest: 'digest-1',
        expiresAt: T0 / 1000 + 3600,
      } satisfies DeliveryRecord;
      expect(await a.ledger.claim(record, T0 / 1000, 60)).toEqual({ status: 'claimed' });
      expect(await b.ledger.claim(record, T0 / 1000, 60)).toEqual({
        status: 'duplicate',
        reason: 'in-flight',
      });
    } finally {
      a.close();
      b.close();
    }
  });

  it('two processes racing over the same keys never both win one, and together pass the breaker as one', async () => {
    const path = file('race');
    openSqliteStores(path, clock).close();
    const keys = Array.from({ length: 300 }, (_, i) => `race-${String(i).padStart(3, '0')}`);
    const limit = 10;
    // One walks the keys up, the other down. Which wins how many is up to SQLite's busy handler
    // (a writer that keeps committing can starve the other until its busy timeout); that every
    // key is won once, and that both exit 0 (no write ran out of time), is the contract.
    const racers = await Promise.all([
      child({ path, name: 'a', now: T0, keys, runners: 20, limit }, 'READY'),
      child({ path, name: 'b', now: T0, keys: [...keys].reverse(), runners: 20, limit }, 'READY'),
    ]);
    for (const racer of racers) racer.process.stdin.end('GO\n');
    const codes = await Promise.all(racers.map((r) => r.exited));
    expect(codes).toEqual([0, 0]);
    const [a, b] = racers.map((r) => JSON.parse(r.output().split('\n').at(-2) ?? '{}') as Won);
    if (!a || !b) throw new Error('a racer printed no result');

    for (const kind of ['actions', 'deliveries', 'bodies'] as const) {
      // Every key won exactly once across the two processes.
      expect([...a[kind], ...b[kind]].sort()).toEqual(keys);
    }
    // Each pass counts a loss of its own: the breaker lets exactly limit − 1 of the 40 through.
    expect(a.passes + b.passes).toBe(limit - 1);
  }, 60_000);

  it('a writer killed while it holds the write lock leaves no claim behind, and blocks no one after', async () => {
    const path = file('killed');
    const stores = openSqliteStores(path, clock, { busyTimeoutMs: 20 });
    try {
      const holder = await child({ path, hold: 'k-killed' }, 'HOLDING');
      // While it holds the lock, a claim fails: the caller gets an error, never a claim.
      await expect(stores.facts.claimAction(action('k-killed'), T0, 60_000)).rejects.toThrow(
        StoreError,
      );
      holder.process.kill('SIGKILL');
      expect(await holder.exited).toBeNull();
      expect(await stores.facts.claimAction(action('k-killed'), T0, 60_000)).toEqual({
        claimed: true,
        previous: null,
      });
    } finally {
      stores.close();
    }
  }, 30_000);

  it('a write that cannot take the lock in time fails as unavailable, and rolls back', async () => {
    const path = file('busy');
    const stores = openSqliteStores(path, clock, { busyTimeoutMs: 20 });
    const other = new DatabaseSync(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      const claim = stores.facts.claimAction(action('k-busy'), T0, 60_000);
      await expect(claim).rejects.toMatchObject({ name: 'StoreError', kind: 'unavailable' });
      await expect(claim).rejects.toThrow('could not claim action k-busy: database is locked');
      await expect(stores.ledger.isClaimed('d-busy', T0 / 1000)).resolves.toBe(false);
      other.exec('COMMIT');
      expect((await stores.facts.claimAction(action('k-busy'), T0, 60_000)).claimed).toBe(true);
    } finally {
      other.close();
      stores.close();
    }
  });
});

describe('SQLite store: a file that cannot be used', () => {
  it.each([
    [
      'a folder that does not exist',
      () => join(folder, 'no-such-folder', 'store.db'),
      /unable to open database file/,
    ],
    [
      'a file that is not a database',
      () => {
        const path = file('garbage');
        writeFileSync(
          path,
          'this is not a database, it is a long enough line of text\n'.repeat(20),
        );
        return path;
      },
      /file is not a database/,
    ],
    [
      'a store laid out by a newer runner-medic',
      () => {
        const path = file('newer');
        const db = new DatabaseSync(path);
        db.exec('PRAGMA user_version = 99');
        db.close();
        return path;
      },
      /its layout is version 99, newer than this runner-medic's 1/,
    ],
  ])('%s: opening throws a StoreError that names the file', (_, make, why) => {
    const path = make();
    let error: unknown;
    try {
      openSqliteStores(path, clock).close();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ kind: 'unavailable' });
    expect((error as Error).message).toContain(`cannot open the SQLite store at ${path}: `);
    expect((error as Error).message).toMatch(why);
  });

  it('a closed store refuses every call with a StoreError instead of answering', async () => {
    const stores = openSqliteStores(file('closed'), clock);
    stores.close();
    await expect(stores.facts.claimAction(action('k-closed'), T0, 60_000)).rejects.toThrow(
      StoreError,
    );
    await expect(stores.facts.readRunnerName('r', T0)).rejects.toThrow(StoreError);
    await expect(stores.ledger.isClaimed('d', T0 / 1000)).rejects.toThrow(StoreError);
  });
});

describe('SQLite store: times to live', () => {
  const rows = (path: string, table: string) => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n);
    } finally {
      db.close();
    }
  };

  it('purges expired rows by the clock, and a later write purges them too', async () => {
    const path = file('ttl');
    let now = T0;
    const stores = openSqliteStores(path, { now: () => now });
    try {
      await stores.facts.setAside('flaky', T0 + 60_000, T0); // a day
      await stores.facts.recordScaleSets('prod', { 'arc-linux': ['prod/arc'] }, T0); // a week
      expect(rows(path, 'facts')).toBe(2);

      now = T0 + 2 * 24 * 3600 * 1000;
      expect(stores.purgeExpired()).toBe(1);
      expect(rows(path, 'facts')).toBe(1);
      expect(await stores.facts.isSetAside('flaky', T0)).toBe(false);

      await stores.facts.setAside('other', now + 60_000, now);
      const muchLater = T0 + 8 * 24 * 3600 * 1000;
      await stores.facts.setAside('third', muchLater + 60_000, muchLater);
      // The write at muchLater purged the scale sets (a week) and 'other' (a day).
      expect(rows(path, 'facts')).toBe(1);
      expect(await stores.facts.isSetAside('third', muchLater)).toBe(true);
    } finally {
      stores.close();
    }
  });

  it('reads an expired action claim as absent: the key can be claimed again', async () => {
    const stores = openSqliteStores(file('ttl-claim'), clock);
    try {
      await stores.facts.claimAction(action('k-old'), T0, 60_000);
      await stores.facts.finishAction('k-old', 'succeeded', T0, 'done');
      const later = T0 + 36 * 24 * 3600 * 1000;
      expect(await stores.facts.claimAction(action('k-old'), later, 60_000)).toEqual({
        claimed: true,
        previous: null,
      });
    } finally {
      stores.close();
    }
  });

  it('reads an expired breaker as none: it passes, and counts afresh', async () => {
    const stores = openSqliteStores(file('ttl-breaker'), clock);
    const gate = { cluster: 'prod', scaleSet: 'arc-linux', limit: 2, windowMs: 900_000 };
    try {
      await stores.facts.countLoss({ ...gate, runner: 'r1', at: T0 }, gate.windowMs, T0);
      const later = T0 + 2 * 24 * 3600 * 1000;
      expect(await stores.facts.passBreaker(gate, { runner: 'r2', at: later }, later)).toEqual({
        passed: true,
      });
      const read = await stores.facts.readBreaker('prod', 'arc-linux', later);
      expect(read.facts.breakers.map((b) => b.losses)).toEqual([{ r2: later }]);
    } finally {
      stores.close();
    }
  });
  it('renews an unchanged instance item daily, not with every sighting, and writes a change at once', async () => {
    const path = file('renew');
    const stores = openSqliteStores(path, clock);
    const expiry = () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return db.prepare("SELECT expires_at AS e FROM facts WHERE pk = 'INSTANCE#i-1'").get()?.e;
      } finally {
        db.close();
      }
    };
    const HOUR = 3600 * 1000;
    try {
      await stores.facts.recordInstance('i-1', 'prod', 'n1', T0);
      const first = expiry();
      await stores.facts.recordInstance('i-1', 'prod', 'n1', T0 + HOUR);
      expect(expiry()).toBe(first);
      await stores.facts.recordInstance('i-1', 'prod', 'n2', T0 + 2 * HOUR);
      expect(expiry()).toBe(Number(first) + 2 * 3600);
      expect((await stores.facts.readInstance('i-1', T0 + 2 * HOUR)).node).toEqual({
        cluster: 'prod',
        nodeName: 'n2',
      });
      await stores.facts.recordInstance('i-1', 'prod', 'n2', T0 + 27 * HOUR);
      expect(expiry()).toBe(Number(first) + 27 * 3600);
    } finally {
      stores.close();
    }
  });
});
