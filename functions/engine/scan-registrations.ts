import type { RunnerRegistration } from '../domain/model/facts.js';
import type { KnownOwner, SweepCursor } from '../ports/facts-store.js';
import type { EngineDeps } from './engine-deps.js';

/** Pages of an owner's runners the orphan scan reads per sweep at most (each one observe call). */
const PAGES_PER_SWEEP = 2;
/** Stored offline registrations read again per sweep at most (each one observe call). */
const RECHECKS_PER_SWEEP = 10;
/** A registration still offline is written again this often, to outlive its day-long TTL. */
const RENEW_MS = 12 * 3600 * 1000;

/** Where the scan of an owner's runners is (a pass over its pages), kept as a sweep cursor. */
const cursorKey = (owner: string) => `registrations:${owner}`;

/**
 * Rule 5's orphan scan and the offline check: the org's self-hosted runners are read a few pages
 * a sweep (GitHub lists them by id), within the installation's observe budget, so one pass over
 * 50,000 runners takes hours while a small org is read whole every sweep. Only what a rule can act
 * on is stored: an offline registration, from when it was first seen offline. A registration
 * coming back online or gone from its page is forgotten; an unchanged one is not written again,
 * except every RENEW_MS while it stays offline. Returns the owners' offline registrations.
 */
export async function scanRegistrations(
  owners: readonly KnownOwner[],
  deps: EngineDeps,
  now: number,
): Promise<RunnerRegistration[]> {
  const out: RunnerRegistration[] = [];
  for (const { owner, installationId } of owners) {
    if (installationId === null) continue;
    const stored = (await deps.store.readRegistrations(owner, now)).facts.registrations;
    const kept = new Map(stored.map((r) => [r.id, r]));
    const fresh = new Set<number>();
    try {
      await recheckStored(deps, owner, installationId, kept, fresh, now);
      await scanPages(deps, owner, installationId, kept, fresh, now);
    } catch (error) {
      deps.log.warn('installation unavailable', { org: owner, error: (error as Error).message });
      deps.metrics.count('InstallationUnavailable', { org: owner });
    }
    // GitHub's own figure for the installation's hour (every caller's calls), for the alarm.
    const used = deps.github.budgetUsed(installationId);
    if (used !== null) deps.metrics.percent?.('GithubBudgetUsed', { org: owner }, used);
    // Only what GitHub said in this sweep is judged: a stored registration not read again
    // (the budget ran out) may have come online since.
    out.push(...[...kept.values()].filter((r) => fresh.has(r.id)));
  }
  return out;
}

/** Stored (offline) registrations read again one by one, while the budget allows. */
async function recheckStored(
  deps: EngineDeps,
  owner: string,
  installationId: number,
  kept: Map<number, RunnerRegistration>,
  fresh: Set<number>,
  now: number,
): Promise<void> {
  for (const was of [...kept.values()].slice(0, RECHECKS_PER_SWEEP)) {
    const read = await deps.github.observe(installationId, async () => ({
      now: await deps.github.getRunnerRegistration({ org: owner }, installationId, was.id),
    }));
    if (read === null) return;
    if (read.now?.status === 'offline') {
      const next = { ...read.now, offlineSince: was.offlineSince ?? now };
      kept.set(was.id, next);
      fresh.add(was.id);
      if (changed(was, next)) await deps.store.putRegistration(next, now);
    } else {
      await deps.store.deleteRegistration(was);
      kept.delete(was.id);
    }
  }
}

async function scanPages(
  deps: EngineDeps,
  owner: string,
  installationId: number,
  kept: Map<number, RunnerRegistration>,
  fresh: Set<number>,
  now: number,
): Promise<void> {
  const cursor = await deps.store.sweepCursor(cursorKey(owner));
  let next: SweepCursor = cursor ?? {
    namespaceIndex: 0,
    passStartedAt: now,
    lastPassStartedAt: null,
  };
  const pass =
    next.passStartedAt !== null && next.lastPassStartedAt != null
      ? next.passStartedAt - next.lastPassStartedAt
      : null;
  for (let n = 0; n < PAGES_PER_SWEEP; n++) {
    const page = next.namespaceIndex + 1;
    const listed = await deps.github.observe(installationId, () =>
      deps.github.listRunnersPage({ org: owner }, installationId, page),
    );
    if (listed === null) break;
    await notePage(deps, listed.registrations, page === 1, listed.last, kept, pass, now);
    for (const r of listed.registrations) fresh.add(r.id);
    next = listed.last
      ? { namespaceIndex: 0, passStartedAt: now, lastPassStartedAt: next.passStartedAt }
      : { ...next, namespaceIndex: page };
    if (listed.last) break;
  }
  if (JSON.stringify(next) !== JSON.stringify(cursor))
    await deps.store.setSweepCursor(cursorKey(owner), next, now);
}

/**
 * One page, in id order: a stored registration whose id falls within the page's range but is not
 * on it is gone; `first`/`last` extend the range to either end.
 */
async function notePage(
  deps: EngineDeps,
  listed: RunnerRegistration[],
  first: boolean,
  last: boolean,
  kept: Map<number, RunnerRegistration>,
  pass: number | null,
  now: number,
): Promise<void> {
  const ids = listed.map((r) => r.id);
  const low = first || ids.length === 0 ? -Infinity : Math.min(...ids);
  const high = last ? Infinity : Math.max(...ids, -Infinity);
  const onPage = new Set(ids);
  for (const was of [...kept.values()])
    if (was.id >= low && was.id <= high && !onPage.has(was.id)) {
      await deps.store.deleteRegistration(was);
      kept.delete(was.id);
    }
  for (const runner of listed) {
    const was = kept.get(runner.id);
    if (runner.status !== 'offline') {
      if (was) {
        await deps.store.deleteRegistration(was);
        kept.delete(runner.id);
      }
      continue;
    }
    const next = { ...runner, offlineSince: was?.offlineSince ?? now };
    kept.set(runner.id, next);
    if (!was || changed(was, next) || renewDue(next.offlineSince, pass, now))
      await deps.store.putRegistration(next, now);
  }
}

function changed(a: RunnerRegistration, b: RunnerRegistration): boolean {
  return (
    a.name !== b.name ||
    a.status !== b.status ||
    a.busy !== b.busy ||
    a.installationId !== b.installationId ||
    a.labels.join(',') !== b.labels.join(',')
  );
}

/**
 * Whether an offline registration crossed a RENEW_MS mark of its offline time since this page
 * was last read (one pass ago; unknown: renew).
 */
function renewDue(offlineSince: number, pass: number | null, now: number): boolean {
  const age = now - offlineSince;
  if (age < RENEW_MS) return false;
  return pass === null || age % RENEW_MS < pass;
}
