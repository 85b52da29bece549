/**
 * The import graph of TypeScript sources, read with the compiler: for the tests that keep
 * functions/ free of import circles and each handler to the modules its function runs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

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
 * Every specifier a module imports: static, `import type`, `export … from`, `import()` and
 * `import('…').T` alike, as the compiler's own pre-processor finds them.
 */
export const allImports = (file: string): string[] =>
  ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);

/** The specifiers a module loads when it runs: type-only imports and exports left out. */
export function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      !node.isTypeOnly &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The graph of `imports` over the modules of a folder, edges within it only. */
export function importGraph(dir: string, imports = allImports): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const targets = imports(file)
      .map((s) => resolveRelative(file, s))
      .filter((t): t is string => t !== null && t.startsWith(dir));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every module a module loads when it runs, itself included, and the packages they import. */
export function runtimeReach(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const specifier of runtimeImports(file)) {
      const local = resolveRelative(file, specifier);
      if (local) walk(local);
      else if (!specifier.startsWith('.') && !specifier.startsWith('node:')) {
        const [scope = '', name = ''] = specifier.split('/');
        packages.add(scope.startsWith('@') ? `${scope}/${name}` : scope);
      }
    }
  };
  walk(entry);
  return { modules, packages };
}
