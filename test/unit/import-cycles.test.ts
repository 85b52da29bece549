import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { allImports, importGraph, runtimeImports } from '../helpers/import-graph.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

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

const circlesIn = (dir: string, imports = allImports) =>
  importCircles(importGraph(dir, imports)).map((c) => c.map((f) => relative(root, f)));

/**
 * The one knot left is of types only: the rules' context and the policy are typed by `RuleName`
 * and `Rules`, which rules/index.ts derives from the list of the rules that use them. It may
 * only ever hold modules of the rules and the policy; any other circle fails.
 */
const TYPE_KNOT = /^functions\/domain\/(decide|policy)\//;

describe('imports in functions/', () => {
  it('form no circle when they run: no module loads one that loads it back', () => {
    expect(circlesIn(join(root, 'functions'), runtimeImports)).toEqual([]);
  });

  it("form no circle through type imports either, but for the rules' own types", () => {
    const circles = circlesIn(join(root, 'functions'));
    expect(circles.length).toBeLessThanOrEqual(1);
    expect(circles.flat().filter((m) => !TYPE_KNOT.test(m))).toEqual([]);
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
      // Run-time edges alone: b.ts imports c.ts only as a type, so only e.ts's circle is left.
      const running = importCircles(importGraph(dir, runtimeImports)).map((c) =>
        c.map((f) => relative(dir, f)),
      );
      expect(running).toEqual([['e.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
