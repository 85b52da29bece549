import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const DOMAIN = 'functions/domain';

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? modules(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * The modules a module loads at run time: its relative imports and re-exports, less those that
 * bring types only (`import type`, or braces naming only `type` members), which TypeScript erases.
 */
function runtimeImportsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(import|export)\s+([^;]*?)\s+from\s+'(\.[^']+)\.js';/gms)]
    .filter(([, , what = '']) => {
      if (/^type\b/.test(what)) return false;
      const names = /^\{([^}]*)\}$/.exec(what.trim())?.[1];
      return (
        names === undefined ||
        names.split(',').some((n) => n.trim() !== '' && !/^type\s/.test(n.trim()))
      );
    })
    .map(([, , , path = '']) => normalize(join(dirname(file), `${path}.ts`)));
}

it('no module of the domain loads itself back at run time through its imports', () => {
  const graph = new Map(modules(DOMAIN).map((m) => [m, runtimeImportsOf(m)]));
  expect(graph.get(`${DOMAIN}/policy/policy.ts`)).toContain(`${DOMAIN}/decide/rules/index.ts`);
  expect(graph.get(`${DOMAIN}/decide/context.ts`)).not.toContain(`${DOMAIN}/policy/policy.ts`);
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (m: string, path: string[]) => {
    if (state.get(m) === 'visiting') cycles.push([...path.slice(path.indexOf(m)), m].join(' -> '));
    if (state.has(m)) return;
    state.set(m, 'visiting');
    for (const next of graph.get(m) ?? []) visit(next, [...path, m]);
    state.set(m, 'done');
  };
  for (const m of graph.keys()) visit(m, []);
  expect(cycles).toEqual([]);
});
