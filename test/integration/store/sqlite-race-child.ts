/**
 * One runner-medic process racing another on one SQLite file, for the store's concurrency test.
 * It opens the store, says READY, waits for GO on stdin, then claims every action key and every
 * delivery of the list (in the order it is given) and passes the breaker once per runner of its
 * own, and prints what it won as one JSON line. With SQLITE_RACE_HOLD, it instead takes the
 * file's write lock with a claim row it never commits, says HOLDING, and waits to be killed.
 */
import { DatabaseSync } from 'node:sqlite';
import { createInterface } from 'node:readline';
import { openSqliteStores } from '../../../functions/adapters/store/sqlite-stores.js';
import { rerunKilledJob } from '../../../functions/domain/decide/rules/rerun-killed-job.js';
import type { Action } from '../../../functions/domain/model/action.js';
import type { GithubObservation } from '../../../functions/domain/model/observation.js';

const setup = JSON.parse(process.env.SQLITE_RACE_SETUP ?? '{}') as {
  path: string;
  name: string;
  now: number;
  keys: string[];
  runners: number;
  limit: number;
  hold?: string;
};

if (setup.hold !== undefined) {
  const db = new DatabaseSync(setup.path);
  db.exec('BEGIN IMMEDIATE');
  db.prepare("INSERT INTO facts (pk, sk, item) VALUES (?, 'ACTION', '{}')").run(
    `ACTION#${setup.hold}`,
  );
  process.stdout.write('HOLDING\n');
  setInterval(() => undefined, 60_000);
} else {
  const stores = openSqliteStores(setup.path, { now: () => setup.now });
  // Warm up (statements prepared, code compiled) on keys of its own, so both start at full pace.
  for (let i = 0; i < 20; i++)
    await stores.facts.claimAction(action(`warm-${setup.name}-${i}`), setup.now, 60_000);
  process.stdout.write('READY\n');
  for await (const line of createInterface({ input: process.stdin })) if (line === 'GO') break;

  const actions: string[] = [];
  const deliveries: string[] = [];
  const bodies: string[] = [];
  let passes = 0;
  const seconds = Math.floor(setup.now / 1000);
  for (const key of setup.keys) {
    // Between keys the engine would do I/O: give the event loop a turn, as it would.
    await new Promise((resolve) => setImmediate(resolve));
    const claim = await stores.facts.claimAction(action(key), setup.now, 60_000);
    if (claim.claimed) actions.push(key);
    const delivery = await stores.ledger.claim(
      {
        deliveryId: `d-${key}`,
        event: 'workflow_job',
        observation: { kind: 'job' } as unknown as GithubObservation,
        bodyDigest: `digest-${key}`,
        expiresAt: seconds + 3600,
      },
      seconds,
      60,
    );
    if (delivery.status === 'claimed') deliveries.push(key);
    // The same body under a delivery id of each process: one of them holds it.
    const body = await stores.ledger.claim(
      {
        deliveryId: `d-${setup.name}-${key}`,
        event: 'workflow_job',
        observation: { kind: 'job' } as unknown as GithubObservation,
        bodyDigest: `shared-${key}`,
        expiresAt: seconds + 3600,
      },
      seconds,
      60,
    );
    if (body.status === 'claimed') bodies.push(key);
  }
  const gate = { cluster: 'race', scaleSet: 'arc-linux', limit: setup.limit, windowMs: 900_000 };
  for (let r = 0; r < setup.runners; r++) {
    const runner = `race/arc/${setup.name}-r${r}`;
    if ((await stores.facts.passBreaker(gate, { runner, at: setup.now }, setup.now)).passed)
      passes++;
  }
  stores.close();
  process.stdout.write(`${JSON.stringify({ actions, deliveries, bodies, passes })}\n`);
}

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
      cluster: 'race',
      namespace: 'arc',
      scaleSet: 'arc-linux',
      repo: 'acme/api',
      runnerName: null,
      jobUrl: null,
    },
    cause: null,
    signal: null,
    reason: 'race',
    dryRun: false,
    budgetKeys: [],
  };
}
