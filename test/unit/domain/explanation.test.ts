import {
  composeExplanation,
  type ExplanationInput,
} from '../../../functions/domain/decide/explanation.js';
import {
  lossKindSchema,
  type LossCause,
  type LossKind,
} from '../../../functions/domain/model/loss.js';
import { T0 } from './fixtures.js';

/** One cause of every kind: the Record type makes a new kind without an example a type error. */
const CAUSES: Record<LossKind, LossCause> = {
  'node-pressure-eviction': {
    kind: 'node-pressure-eviction',
    resource: 'memory',
    container: 'runner',
  },
  'admission-reject': { kind: 'admission-reject', resource: 'disk', detail: 'DiskPressure' },
  'kubelet-shutdown': { kind: 'kubelet-shutdown' },
  'oom-killed': { kind: 'oom-killed', container: 'runner' },
  'api-eviction': { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'drift' },
  preemption: { kind: 'preemption' },
  'taint-manager': { kind: 'taint-manager' },
  'pod-gc': { kind: 'pod-gc' },
  'runner-killed': { kind: 'runner-killed', container: 'runner', exitCode: 137 },
  'node-not-ready': { kind: 'node-not-ready' },
  'pod-not-found': { kind: 'pod-not-found' },
  'runner-failed': { kind: 'runner-failed', reason: null },
  'runner-stuck': { kind: 'runner-stuck' },
};

const input: ExplanationInput = {
  kind: 'rerun-failed-jobs',
  rule: 'rule-3-rerun-killed-job',
  reason: 'run 1 attempt 1 completed; jobs 700 lost their runner',
  cause: CAUSES['node-pressure-eviction'],
  signal: {
    source: 'pod-event',
    detail: 'Evicted (kubelet): The node was low on resource: memory.',
  },
  jobNames: ['build'],
  runId: 1,
  runAttempt: 1,
  runUrl: 'https://github.com/acme/app/actions/runs/1',
  runner: { cluster: 'prod-eu', namespace: 'arc-runners', name: 'set-runner-a' },
  node: 'ip-10-0-0-1',
  lostAt: T0,
  actedAt: T0 + 60_000,
  budget: { limit: 2, used: 1 },
};

describe('composeExplanation: the check run that explains an action', () => {
  it('describes every loss kind in its own words', () => {
    const titles = lossKindSchema.options.map(
      (kind) => composeExplanation({ ...input, cause: CAUSES[kind] }).title,
    );
    expect(new Set(titles).size).toBe(lossKindSchema.options.length);
    for (const title of titles) expect(title).toMatch(/^Re-ran build: runner/);
    expect(titles).toContain('Re-ran build: runner pod was evicted (MemoryPressure)');
    expect(titles).toContain('Re-ran build: runner pod was evicted by karpenter (drift)');
    expect(titles).toContain('Re-ran build: runner failed to start (no reason given)');
    expect(titles).toContain('Re-ran build: runner was killed (container runner, exit 137)');
  });

  it('a re-run: its evidence, its attempt and the budget left', () => {
    const { summary } = composeExplanation(input);
    expect(summary).toContain('- **Pod**: `arc-runners/set-runner-a` in cluster `prod-eu`');
    expect(summary).toContain('- **Node**: `ip-10-0-0-1`');
    expect(summary).toContain('- **Cause**: node-pressure-eviction');
    expect(summary).toContain(
      '- **Time**: 2026-12-02T10:00:00.000Z (acted at 2026-12-02T10:01:00.000Z)',
    );
    expect(summary).toContain('- **Attempt**: 1 (this re-run is attempt 2)');
    expect(summary).toContain('- **Re-run budget**: 1 of 2 re-runs left for this job');
  });

  it.each<[ExplanationInput['kind'], string]>([
    ['cancel-run', 'Cancelled run 1: '],
    ['force-cancel-run', 'Force-cancelled run 1: '],
    ['rerun-job', "Re-ran run 1's jobs: "],
    ['delete-ephemeral-runner', "Freed the runner of run 1's jobs: "],
  ])('%s with no job names known → %s', (kind, title) => {
    const e = composeExplanation({ ...input, kind, jobNames: [], cause: null, reason: 'why' });
    expect(e.title).toBe(`${title}why`);
  });

  it('says what is not known rather than inventing it', () => {
    const { summary } = composeExplanation({
      ...input,
      kind: 'cancel-run',
      runner: null,
      node: null,
      signal: null,
      cause: null,
      lostAt: null,
      runAttempt: null,
      budget: null,
    });
    expect(summary).not.toContain('**Pod**');
    expect(summary).not.toContain('**Cause**');
    expect(summary).toContain('- **Node**: not known');
    expect(summary).toContain('- **Seen in**: no Kubernetes signal recorded');
    expect(summary).toContain('- **Time**: not known (acted at');
    expect(summary).toContain('- **Attempt**: not known');
    expect(summary).toContain('- **Re-run budget**: not charged (only re-runs use the budget)');
  });

  it('a cancel names its attempt as it is, and an overspent budget as none left', () => {
    expect(composeExplanation({ ...input, kind: 'cancel-run' }).summary).toContain(
      '- **Attempt**: 1\n',
    );
    expect(composeExplanation({ ...input, budget: { limit: 2, used: 3 } }).summary).toContain(
      '0 of 2 re-runs left',
    );
  });
});
