import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import pattern for modules of these folders of functions/, reached from a sibling folder. */
const outerLayers = (folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;

/** The product ships without its twins: functions/ never reaches sim/ or sandbox/. */
const noTwinInProduct = {
  regex: '^(\\.\\./)+(sim|sandbox)(/|$)',
  message:
    'functions/ is the product: it imports nothing from the twins (sim/) or the sandbox layer (sandbox/), which wires the two in a clone.',
};

export default tseslint.config(
  { ignores: ['node_modules', '.serverless', '.esbuild', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only' },
        { object: 'it', property: 'skip' },
        { object: 'describe', property: 'only' },
        { object: 'describe', property: 'skip' },
        { object: 'test', property: 'only' },
        { object: 'test', property: 'skip' },
      ],
    },
  },
  {
    // Before the folders' own blocks, which repeat the pattern (a later block's rule replaces it).
    files: ['functions/**/*.{ts,mjs}'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTwinInProduct] }] },
  },
  {
    files: ['sim/kube/**/*.ts', 'sim/github/**/*.ts', 'sim/aws/**/*.ts', 'sim/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(functions|sandbox)(/|$)',
              message:
                'The twins model GitHub, Kubernetes and AWS, not runner-medic: they import nothing from functions/ or sandbox/. sandbox/ wires the product to them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['functions/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@aws-sdk/*',
                '@octokit/*',
                '@kubernetes/*',
                '@middy/*',
                '@aws-lambda-powertools/*',
                'node:*',
              ],
              message: 'The domain is pure: no SDKs, no I/O.',
            },
            {
              regex: outerLayers([
                'engine',
                'ingress',
                'adapters',
                'config',
                'handlers',
                'ports',
                'cli',
                'doctor',
              ]),
              message: 'The domain imports nothing outside functions/domain.',
            },
            noTwinInProduct,
          ],
        },
      ],
    },
  },
  {
    files: ['functions/adapters/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: outerLayers(['engine', 'ingress', 'config']),
              message:
                'Adapters implement ports/: they never import the engine, ingress or config.',
            },
            noTwinInProduct,
          ],
        },
      ],
    },
  },
  {
    files: ['functions/handlers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: outerLayers(['adapters', 'domain', 'cli', 'doctor']),
              message:
                'Handlers are thin: they import config (the composition) and the flow modules (engine, ingress), and port types.',
            },
            noTwinInProduct,
          ],
        },
      ],
    },
  },
  {
    files: ['functions/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'no-restricted-syntax': [
        'error',
        {
          // zod's named `z` is one object of every export: a bundle then keeps all of zod, its
          // 260 KB of locales included; the namespace import lets esbuild drop what is unused.
          selector: "ImportDeclaration[source.value='zod'][importKind='value'] ImportSpecifier",
          message:
            "Import zod as `import * as z from 'zod'`, so that bundles keep only what they use.",
        },
      ],
    },
  },
);
