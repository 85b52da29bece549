import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

/** A relative specifier as the compiler resolves it under NodeNext: `./x.js` is `./x.ts`. */
function resolveRelative(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base,
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((c) => /\.(ts|mts)$/.test(c) && existsSync(c)) ?? null;
}

/**
 * Every import edge between the modules of a folder: static, `import type`, `export … from`,
 * `import()` and `import('…').T` alike, as the compiler's own pre-processor finds them.
 */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((f) => resolveRelative(file, f.fileName))
      .filter((t): t is string => t !== null && t.startsWith(dir));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles of a graph: its strongly connected components of more than one module, or a module importing itself (Tarjan). */
function importCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

const circlesIn = (dir: string) =>
  importCircles(importGraph(dir)).map((c) => c.map((f) => relative(root, f)));

/**
 * The one circle left, through type-only edges: the rules' context and the policy are typed by
 * `RuleName` and `Rules`, which rules/index.ts derives from the list of rules that use them.
 * Nothing may join it, and no other circle may form.
 */
const KNOWN_CIRCLES = [
  [
    'functions/domain/decide/context.ts',
    'functions/domain/decide/free-slot.ts',
    'functions/domain/decide/retry.ts',
    'functions/domain/decide/rule.ts',
    'functions/domain/decide/rules/circuit-breaker.ts',
    'functions/domain/decide/rules/deprecated-runner.ts',
    'functions/domain/decide/rules/free-poisoned-slot.ts',
    'functions/domain/decide/rules/hung-job.ts',
    'functions/domain/decide/rules/index.ts',
    'functions/domain/decide/rules/orphan-registration.ts',
    'functions/domain/decide/rules/rerun-killed-job.ts',
    'functions/domain/decide/rules/starving-queue.ts',
    'functions/domain/decide/rules/warned-node.ts',
    'functions/domain/policy/policy-schema.ts',
    'functions/domain/policy/policy.ts',
    'functions/domain/policy/resolve-policy.ts',
  ],
];

describe('imports in functions/', () => {
  it('form no new circle, type-only imports included', () => {
    expect(circlesIn(join(root, 'functions'))).toEqual(KNOWN_CIRCLES);
  });

  it('a planted circle is found, whether its edges import values or only types', () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
      writeFileSync(
        join(dir, 'b.ts'),
        "import type { C } from './c.js';\nexport const b: C = 1;\n",
      );
      writeFileSync(
        join(dir, 'c.ts'),
        "export type { A } from './a.js';\nexport type C = number;\n",
      );
      writeFileSync(join(dir, 'd.ts'), "import { a } from './a.js';\nexport const d = a;\n");
      writeFileSync(join(dir, 'e.ts'), "export const e = () => import('./e.js');\n");
      const circles = importCircles(importGraph(dir)).map((c) => c.map((f) => relative(dir, f)));
      expect(circles).toEqual(expect.arrayContaining([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]));
      expect(circles).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
