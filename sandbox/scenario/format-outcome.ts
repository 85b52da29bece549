import type { ScenarioOutcome } from './outcome.js';

const time = (s: number | null) => (s === null ? '-' : `${s.toFixed(1)}s`);

/** The human-readable outcome printed after the timeline. */
export function formatOutcome(o: ScenarioOutcome): string {
  const lines = [
    '',
    `${o.passed ? 'PASSED' : 'FAILED'}  ${o.scenario}  (${o.remediation ? 'with runner-medic' : 'ARC alone'}, ${o.simulatedSeconds}s simulated)`,
    '',
    'jobs:',
    ...o.jobs.map((j) => {
      const recovery =
        j.lostAt !== null && j.recoveredAt !== null
          ? `  recovered ${(j.recoveredAt - j.lostAt).toFixed(1)}s after loss${j.runningAgainAt !== null ? `, running again ${(j.runningAgainAt - j.lostAt).toFixed(1)}s` : ''}`
          : '';
      return `  run ${j.run}  ${j.name.padEnd(24)} ${j.status}/${j.conclusion ?? '-'}  attempts ${j.attempts}  lost ${time(j.lostAt)}  action ${time(j.actionAt)}  recovered ${time(j.recoveredAt)}${recovery}`;
    }),
    '',
    `mutating calls by actor (all of them in --json): ${countByActor(o)}`,
    `runner-medic calls: ${o.medicCalls.kubernetes} Kubernetes, ${o.medicCalls.github} GitHub`,
    ...o.actions
      .filter((a) => a.by === 'runner-medic' || a.by === 'user')
      .map(
        (a) =>
          `  ${time(a.at).padStart(8)}  ${a.by}  ${a.api} ${a.verb} ${a.target}${a.runAttempt === null ? '' : ` (attempt ${a.runAttempt})`} → ${a.status}${a.rule ? `  [${a.rule}]` : ''}`,
      ),
  ];
  if (o.violations.length > 0) lines.push('', 'violations:', ...o.violations.map((v) => `  ${v}`));
  if (o.failedExpectations.length > 0) {
    lines.push('', 'failed expectations:', ...o.failedExpectations.map((v) => `  ${v}`));
  }
  if (o.errors.length > 0)
    lines.push(
      '',
      'invocations that threw (each fails the scenario; EventBridge would retry it in AWS):',
      ...o.errors.map((e) => `  ${e}`),
    );
  return lines.join('\n');
}

function countByActor(o: ScenarioOutcome): string {
  const counts = new Map<string, number>();
  for (const a of o.actions)
    counts.set(`${a.by} ${a.api}`, (counts.get(`${a.by} ${a.api}`) ?? 0) + 1);
  return [...counts].map(([who, n]) => `${who} ${n}`).join(', ');
}
