import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { runtimeReach } from '../helpers/import-graph.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const reach = (handler: string) => {
  const { modules, packages } = runtimeReach(join(root, 'functions/handlers', handler));
  return { modules: [...modules].map((m) => relative(root, m)), packages: [...packages] };
};

/** What only the engine runs: a webhook bundle that held any of it would start 3x slower. */
const ENGINE_ONLY_PACKAGES = [
  '@kubernetes/client-node',
  '@octokit/core',
  '@octokit/auth-app',
  '@aws-sdk/client-eks',
  '@aws-sdk/client-sqs',
  '@aws-sdk/credential-providers',
  'undici',
  'yaml',
  'bottleneck',
];

describe('the github-webhook handler', () => {
  const { modules, packages } = reach('github-webhook.ts');

  it('loads the ingress, its ledger, the bus and the secret reader', () => {
    expect(modules).toEqual(
      expect.arrayContaining([
        'functions/config/compose-ingress.ts',
        'functions/ingress/receive-webhook.ts',
        'functions/adapters/store/dynamo-delivery-ledger.ts',
        'functions/adapters/bus/eventbridge-publisher.ts',
        'functions/adapters/secrets/secret-reader.ts',
        'functions/adapters/github/webhook-verifier.ts',
      ]),
    );
  });

  it('loads nothing of the engine, Kubernetes, the GitHub API client or EKS', () => {
    expect(modules.filter((m) => /^functions\/(engine|adapters\/kubernetes)\//.test(m))).toEqual(
      [],
    );
    expect(modules).not.toContain('functions/config/compose-engine.ts');
    expect(packages.filter((p) => ENGINE_ONLY_PACKAGES.includes(p))).toEqual([]);
  });
});

describe('the engine handlers', () => {
  it.each(['remediate.ts', 'reconcile.ts'])('%s loads the engine and its adapters', (handler) => {
    const { modules, packages } = reach(handler);
    expect(modules).toContain('functions/config/compose-engine.ts');
    expect(packages).toEqual(expect.arrayContaining(['@kubernetes/client-node', '@octokit/core']));
  });
});

/**
 * The modules a bundle evaluates when its function starts: esbuild's graph of the handler from
 * its metafile, followed through static imports and requires but not through `import()`.
 */
async function startupInputs(handler: string): Promise<string[]> {
  const { metafile } = await build({
    entryPoints: [join(root, 'functions/handlers', handler)],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*'],
    outdir: join(root, '.esbuild-unwritten'),
    absWorkingDir: root,
    logLevel: 'error',
  });
  const seen = new Set<string>();
  const walk = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const i of metafile.inputs[path]?.imports ?? [])
      if (i.kind !== 'dynamic-import' && !i.external) walk(i.path);
  };
  walk(`functions/handlers/${handler}`);
  return [...seen];
}

describe('the engine bundles at start-up', () => {
  it.each(['remediate.ts', 'reconcile.ts'])(
    '%s evaluates no @kubernetes/client-node or undici until a cluster is reached',
    async (handler) => {
      const inputs = await startupInputs(handler);
      expect(inputs).toContain('functions/config/compose-engine.ts');
      expect(
        inputs.filter((p) => /node_modules\/(@kubernetes\/client-node|undici)\//.test(p)),
      ).toEqual([]);
    },
  );

  it.each(['remediate.ts', 'reconcile.ts'])(
    "%s holds neither octokit's table of every route nor Bottleneck's clustering build",
    async (handler) => {
      const inputs = await startupInputs(handler);
      expect(inputs).toContain('functions/adapters/github/gateway-rest.ts');
      expect(inputs).toContain('node_modules/bottleneck/light.js');
      expect(
        inputs.filter((p) =>
          /node_modules\/(@octokit\/plugin-rest-endpoint-methods|bottleneck\/lib)\//.test(p),
        ),
      ).toEqual([]);
    },
  );
});
