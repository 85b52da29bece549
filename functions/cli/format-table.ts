import type { DoctorCheck } from '../doctor/doctor-check.js';

const MARK: Record<DoctorCheck['status'], string> = {
  ok: 'ok',
  finding: 'FINDING',
  error: 'ERROR',
};

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** One row per check: status and id, then why it matters and what to do, wrapped to `width`. */
export function formatTable(checks: readonly DoctorCheck[], width = 100): string {
  const idWidth = Math.max(...checks.map((c) => c.id.length), 5);
  const indent = ' '.repeat(9 + idWidth + 2);
  const textWidth = Math.max(40, width - indent.length);
  const out: string[] = [
    `${'STATUS'.padEnd(9)}${'CHECK'.padEnd(idWidth + 2)}WHY IT MATTERS / WHAT TO DO`,
  ];
  for (const c of checks) {
    const why = wrap(c.why, textWidth);
    const what = c.status === 'ok' ? [] : wrap(`→ ${c.what}`, textWidth);
    const [first, ...rest] = [...why, ...what];
    out.push(`${MARK[c.status].padEnd(9)}${c.id.padEnd(idWidth + 2)}${first ?? ''}`);
    for (const line of rest) out.push(`${indent}${line}`);
  }
  const count = (s: DoctorCheck['status']) => checks.filter((c) => c.status === s).length;
  out.push('', `${count('ok')} ok, ${count('finding')} findings, ${count('error')} errors`);
  return out.join('\n');
}
