/**
 * `runner-medic replay --since 7d`: what runner-medic did, or would have done in dry run, per
 * rule, from its audit trail: how many actions of each kind, on how many jobs and runners, how
 * fast after the loss, and what a guardrail held back. The question it answers: is it safe to
 * turn dry run off?
 */

import { MUTATING_KINDS } from '../domain/model/action.js';
import type { AuditRecord } from '../ports/facts-store.js';
import { RunnerMedicError } from '../ports/errors.js';

export type { AuditRecord };

interface LossToAction {
  count: number;
  medianSeconds: number;
  maxSeconds: number;
}

interface RuleFigures {
  rule: string;
  /** Actions taken (not in dry run) that succeeded, by kind. */
  did: Record<string, number>;
  /** Actions decided in dry run, by kind: what it would have done. */
  wouldHave: Record<string, number>;
  /** Actions that failed or ended without a clear answer (failed, unknown, retry-later). */
  failed: number;
  /** Would-be actions a guardrail held back (an exhausted re-run budget), by reason. */
  held: { why: string; count: number }[];
  /** Distinct jobs and runners the rule's actions concerned. */
  jobs: number;
  runners: number;
  /** Loss to action, for the actions that call a mutating API (null when none is dated). */
  lossToAction: LossToAction | null;
}

export interface ReplayReport {
  since: string;
  until: string;
  rules: RuleFigures[];
  /** Held by an open circuit breaker (BreakerHolding events): runners held. */
  heldByBreaker: number;
  /** One sentence on dry run, from the figures. */
  verdict: string;
}

const DURATION = /^(\d+)(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `7d`, `24h`, `90m` in ms; a string says why it is not one. */
export function parseDuration(text: string): number | string {
  const match = DURATION.exec(text.trim());
  if (!match) return `not a duration (7d, 24h, 90m): ${text}`;
  const [, amount, unit] = match;
  return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
}

/** Action kinds that call a mutating API, as audit events name them. */
const MUTATING: ReadonlySet<string> = MUTATING_KINDS;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function jobsOf(detail: Record<string, unknown>): string[] {
  const target = (detail['target'] ?? {}) as Record<string, unknown>;
  const repo = text(target['repo']) ?? text(detail['repository']) ?? '';
  const ids = Array.isArray(target['jobIds'])
    ? target['jobIds']
    : typeof target['jobId'] === 'number'
      ? [target['jobId']]
      : [];
  const fromUrl = text(detail['jobUrl'])?.match(/\/job\/(\d+)/)?.[1];
  return [...ids.map((id) => `${repo}#${String(id)}`), ...(fromUrl ? [`${repo}#${fromUrl}`] : [])];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? 0)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const round = (seconds: number) => Math.round(seconds * 10) / 10;

/** What is gathered of one rule's records before its figures are counted. */
interface RuleTally {
  figures: RuleFigures;
  jobs: Set<string>;
  runners: Set<string>;
  delays: number[];
  held: Map<string, number>;
}

const emptyTally = (rule: string): RuleTally => ({
  figures: {
    rule,
    did: {},
    wouldHave: {},
    failed: 0,
    held: [],
    jobs: 0,
    runners: 0,
    lossToAction: null,
  },
  jobs: new Set(),
  runners: new Set(),
  delays: [],
  held: new Map(),
});

const UNCLEAR = new Set(['failed', 'unknown', 'retry-later']);

/** Adds one Remediation audit event to its rule's tally. */
function tally(e: RuleTally, at: number, detail: Record<string, unknown>): void {
  const kind = text(detail['action']) ?? 'unknown';
  const outcome = text(detail['outcome']);
  if (outcome === 'gave-up' && detail['gaveUp'] !== undefined) {
    const why = text(detail['reason']) ?? 'held';
    e.held.set(why, (e.held.get(why) ?? 0) + 1);
    return;
  }
  if (outcome === 'dry-run') e.figures.wouldHave[kind] = (e.figures.wouldHave[kind] ?? 0) + 1;
  else if (outcome === 'succeeded') e.figures.did[kind] = (e.figures.did[kind] ?? 0) + 1;
  else if (outcome !== null && UNCLEAR.has(outcome)) e.figures.failed++;
  if (outcome !== 'dry-run' && outcome !== 'succeeded') return;
  for (const job of jobsOf(detail)) e.jobs.add(job);
  const runner = text(detail['runner']);
  if (runner) e.runners.add(`${text(detail['cluster']) ?? ''}/${runner}`);
  const lostAt = text(detail['lostAt']);
  if (MUTATING.has(kind) && lostAt !== null && Number.isFinite(Date.parse(lostAt)))
    e.delays.push((at - Date.parse(lostAt)) / 1000);
}

const figuresOf = (e: RuleTally): RuleFigures => ({
  ...e.figures,
  jobs: e.jobs.size,
  runners: e.runners.size,
  held: [...e.held].map(([why, count]) => ({ why, count })),
  lossToAction:
    e.delays.length === 0
      ? null
      : {
          count: e.delays.length,
          medianSeconds: round(median(e.delays)),
          maxSeconds: round(Math.max(...e.delays)),
        },
});

/** The figures per rule over the records published in [since, until]. Pure. */
export function replayReport(
  records: readonly AuditRecord[],
  since: number,
  until: number,
): ReplayReport {
  const byRule = new Map<string, RuleTally>();
  const breakerHeld = new Set<string>();
  for (const { at, detailType, detail } of records) {
    if (at < since || at > until) continue;
    if (detailType === 'BreakerHolding') {
      for (const s of Array.isArray(detail['held']) ? detail['held'] : [])
        breakerHeld.add(String(s));
      continue;
    }
    if (detailType !== 'Remediation') continue;
    const rule = text(detail['rule']) ?? 'unknown';
    const e = byRule.get(rule) ?? emptyTally(rule);
    byRule.set(rule, e);
    tally(e, at, detail);
  }
  const rules = [...byRule.values()].map(figuresOf).sort((a, b) => a.rule.localeCompare(b.rule));
  return {
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    rules,
    heldByBreaker: breakerHeld.size,
    verdict: verdictOf(rules, breakerHeld.size),
  };
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

function verdictOf(rules: RuleFigures[], heldByBreaker: number): string {
  const would = rules.reduce((n, r) => n + total(r.wouldHave), 0);
  const did = rules.reduce((n, r) => n + total(r.did), 0);
  const failed = rules.reduce((n, r) => n + r.failed, 0);
  const held =
    rules.reduce((n, r) => n + r.held.reduce((m, h) => m + h.count, 0), 0) + heldByBreaker;
  if (would === 0 && did === 0)
    return 'Nothing to judge: no action was decided in this window. Replay a longer one.';
  const parts = [
    would > 0 ? `${would} action(s) decided in dry run` : `${did} action(s) taken`,
    `${held} held by a guardrail`,
    `${failed} failed`,
  ];
  return `${parts.join(', ')}. Read each rule's would-have list: if every one is a job you would have re-run or a runner you would have freed by hand, dry run can be turned off (rule by rule: rules.<rule>.dryRun).`;
}

/**
 * Audit records from a file: JSON lines or one JSON array of EventBridge events (`detail-type`,
 * `detail`, `time`, as an archive or the audit log group holds them), of `{ detailType, detail,
 * at }`, or of bare `Remediation` details (dated by their `at`).
 */
export function parseAuditRecords(content: string): AuditRecord[] {
  const trimmed = content.trim();
  if (trimmed === '') return [];
  const values: unknown[] = trimmed.startsWith('[')
    ? (JSON.parse(trimmed) as unknown[])
    : trimmed
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
  return values.map((value, i) => {
    const v = (value ?? {}) as Record<string, unknown>;
    const detail = (
      typeof v['detail'] === 'object' && v['detail'] !== null ? v['detail'] : v
    ) as Record<string, unknown>;
    const detailType =
      text(v['detail-type']) ?? text(v['detailType']) ?? (detail['rule'] ? 'Remediation' : '');
    const when =
      typeof v['at'] === 'number'
        ? v['at']
        : Date.parse(text(v['time']) ?? text(detail['at']) ?? '');
    if (!Number.isFinite(when))
      throw new RunnerMedicError('bad-response', `audit record ${i + 1}: no time`);
    return { at: when, detailType, detail };
  });
}

/** The report as a table per rule, for a person. */
export function formatReplay(report: ReplayReport): string {
  const lines = [`runner-medic replay: ${report.since} to ${report.until}`, ''];
  if (report.rules.length === 0) lines.push('No action recorded in this window.');
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([kind, n]) => `${n} × ${kind}`)
      .join(', ') || 'none';
  for (const r of report.rules) {
    lines.push(r.rule);
    lines.push(`  did:          ${list(r.did)}`);
    lines.push(`  would have:   ${list(r.wouldHave)} (dry run)`);
    lines.push(`  jobs:         ${r.jobs}, runners: ${r.runners}`);
    lines.push(
      `  loss→action:  ${
        r.lossToAction
          ? `median ${r.lossToAction.medianSeconds} s, max ${r.lossToAction.maxSeconds} s over ${r.lossToAction.count}`
          : 'not dated'
      }`,
    );
    lines.push(
      `  held:         ${r.held.map((h) => `${h.count} × ${h.why}`).join('; ') || 'none'}`,
    );
    if (r.failed > 0) lines.push(`  failed:       ${r.failed}`);
  }
  if (report.heldByBreaker > 0)
    lines.push('', `circuit breaker: ${report.heldByBreaker} runner(s) held while it was open`);
  lines.push('', report.verdict);
  return `${lines.join('\n')}\n`;
}
