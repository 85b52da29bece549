import { availableParallelism } from 'node:os';

/** Tests run as native ESM (the octokit and Kubernetes clients are ESM-only). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // functions/ through ts-jest, whose source maps keep every line that coverage counts; the
  // twins and the tests (two thirds of the code) through esbuild, several times faster.
  transform: {
    '^.+/functions/.+\\.ts$': [
      'ts-jest',
      { useESM: true, isolatedModules: true, diagnostics: false },
    ],
    '^.+\\.ts$': '<rootDir>/test/helpers/esbuild-transform.js',
  },
  testSequencer: '<rootDir>/test/helpers/slow-first-sequencer.js',
  // Fills the transform cache before the workers start (a cold cache is transformed once, not once
  // per worker).
  globalSetup: '<rootDir>/test/helpers/warm-transform-cache.js',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/helpers/setup-env.ts'],
  testTimeout: 30000,
  // Three workers on two cores: the scenario plays are CPU-bound, but a fifth of the suite's
  // time is spent waiting on child processes (npm start, serve, the container entrypoint), and a
  // third worker computes meanwhile. Measured with coverage on 2 cores: 359 s with 2, 325 s with 3.
  // A number, not '150%': jest reads a percentage over 100 as that many workers.
  maxWorkers: Math.ceil(availableParallelism() * 1.5),
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  // Coverage of the product's code (not the twins or the tests): the pure domain is covered
  // line for line by its unit tests; the rest keeps a floor measured on this suite.
  collectCoverageFrom: ['functions/**/*.ts', '!functions/**/*.d.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
  coverageThreshold: {
    './functions/domain/': { lines: 100 },
    global: { lines: 88 },
  },
};
