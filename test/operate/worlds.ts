/** Worlds the [operate] tests share: the engine's harness, seeded as the seed reports tell. */
import { runEngine } from '../../functions/engine/run-engine.js';
import { NS, SET, seedRunner, seedRunnerSet } from '../integration/engine/arc-objects.js';
import type { EngineHarness } from '../integration/engine/engine-harness.js';
import { observe } from '../integration/engine/observations.js';

/** A run whose `build` job loses its runner mid-job (SIGTERM); ARC deletes pod and runner. */
export async function killedMidJob(harness: EngineHarness) {
  const { github, clock } = harness;
  github.createOrg('acme');
  github.createRepo('acme/app');
  const installationId = github.createInstallation('acme');
  github.defineWorkflow('acme/app', {
    name: 'ci',
    jobs: [
      { name: 'build', runsOn: SET, durationMs: 300_000 },
      { name: 'lint', runsOn: SET, durationMs: 240_000 },
    ],
  });
  const set = seedRunnerSet(harness);
  const observations = observe(github, installationId);
  const scaleSetId = github.actions.registerScaleSet({ owner: 'acme', name: SET });
  const names = ['aaaaa', 'bbbbb'].map((s) => `${SET}-x7k2p-runner-${s}`);
  for (const name of names) github.actions.registerRunner(scaleSetId, name);
  const { runId } = github.triggerRun('acme/app', 'ci');
  await clock.advance(1000);
  names.forEach((name, i) => {
    github.actions.acquireJob(name);
    seedRunner(
      harness,
      set,
      name,
      {
        phase: 'Running',
        ready: true,
        runnerName: name,
        jobRepositoryName: 'acme/app',
        workflowRunId: runId,
        jobDisplayName: i === 0 ? 'build' : 'lint',
        jobId: `guid-${name}`,
      },
      { withPod: true },
    );
  });
  await runEngine({ kind: 'sweep' }, harness.engine);
  await clock.advance(120_000);
  github.actions.runnerStopped(names[0] ?? '', 'sigterm');
  harness.kube.api.delete('kubelet', 'pods', NS, names[0] ?? '');
  harness.kube.api.delete('arc', 'ephemeralrunners', NS, names[0] ?? '');
  await clock.advance(300_000);
  return { runId, observations };
}
