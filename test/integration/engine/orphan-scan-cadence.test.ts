import { runEngine } from '../../../functions/engine/run-engine.js';
import { FULL_RELIST_MS } from '../../../functions/engine/sweep.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { NS, SET, completedJob, seedRunner, seedRunnerSet } from './arc-objects.js';
import { EngineHarness } from './engine-harness.js';

/** The org's registered runners: more than the orphan scan's 2 pages of 100 a sweep. */
const RUNNERS = 600;
const PAGES = RUNNERS / 100;
const MINUTE = 60_000;
/** SQS's longest message delay: a later wake-up is left to the sweep (sqs-wake-scheduler.ts). */
const MAX_WAKE_DELAY_MS = 900_000;
const GRACE_MS = DEFAULT_POLICY.rules.orphanRegistration.graceSeconds * 1000;
/** README, "Cost per hour (the sweep)": beyond 200 runners, about `runners / 200` minutes. */
const SCAN_PASS_MS = (RUNNERS / 200) * MINUTE;
const NODE = 'ip-10-0-1-17';
const ORPHAN = `${SET}-x7k2p-runner-orphn`;
const HEALTHY = [`${SET}-x7k2p-runner-aaaaa`, `${SET}-x7k2p-runner-bbbbb`];

/**
 * README, "Cost per hour (the sweep)": an orphan registration is removed once the orphan scan
 * (2 pages of 100 runners a sweep) reaches its page: within about `runners / 200` minutes beyond
 * 200 runners, plus rule 5's 15-minute grace. Played at the deployed schedule (a sweep a minute,
 * each wake-up delivered on its second as the SQS delay queue does, up to its 15 minutes), with
 * real octokit against the GitHub twin over a socket and dynalite, on the simulated clock. The
 * orphan goes offline just after the scan read its page: the worst phase.
 */
describe('rule 5 at org scale: an orphan among 600 runners, found by the slow orphan scan', () => {
  const harness = new EngineHarness();
  const wakes: number[] = [];
  let orphanId = 0;
  let orphanedAt = 0;
  /** runner-medic's successful registration deletes (time, target). */
  const deleted: { at: number; target: string }[] = [];
  /** Pages of the org's runners read per sweep, from the GitHub twin's request log. */
  const pagesPerSweep: number[] = [];

  /** One minute of the deployed schedule: a sweep, then the wake-ups due before the next one. */
  async function minute(): Promise<void> {
    const { clock } = harness;
    const next = clock.now() + MINUTE;
    const from = harness.github.requests().length;
    await runEngine({ kind: 'sweep' }, harness.engine);
    pagesPerSweep.push(
      harness.github
        .requests()
        .slice(from)
        .filter((r) => r.by === 'runner-medic' && r.path === '/orgs/acme/actions/runners').length,
    );
    for (;;) {
      const due = wakes.filter((w) => w < next).sort((a, b) => a - b)[0];
      if (due === undefined) break;
      wakes.splice(wakes.indexOf(due), 1);
      await clock.advanceTo(Math.max(due, clock.now()));
      await runEngine({ kind: 'wake' }, harness.engine);
    }
    await clock.advanceTo(next);
  }

  const deletes = () =>
    harness
      .medicGithubCalls()
      .filter((a) => a.verb === 'delete-runner' && a.status === 204)
      .map((a) => ({ at: a.at, target: a.target }));

  beforeAll(async () => {
    await harness.start();
    harness.usePolicy({ allow: { namespaces: [NS] } });
    harness.engine.wake = {
      wakeAt: async (at) => {
        if (at - harness.clock.now() <= MAX_WAKE_DELAY_MS) wakes.push(at);
      },
    };
    const { github, kube, clock } = harness;
    github.createOrg('acme');
    github.createRepo('acme/app');
    const installationId = github.createInstallation('acme');
    const scaleSetId = github.actions.registerScaleSet({ owner: 'acme', name: SET });
    // ARC's runners in the cluster, first by id (on the scan's first page), then the rest of the
    // org's runners (VMs of another pool): every one registered and online.
    const ids = new Map<string, number>();
    for (const name of [ORPHAN, ...HEALTHY]) {
      ids.set(name, github.actions.registerRunner(scaleSetId, name));
      github.actions.acquireJob(name);
    }
    const vms = github.actions.registerScaleSet({ owner: 'acme', name: 'vm-pool' });
    for (let i = ids.size; i < RUNNERS; i++) {
      const name = `vm-pool-${String(i).padStart(4, '0')}`;
      github.actions.registerRunner(vms, name);
      github.actions.acquireJob(name);
    }
    orphanId = ids.get(ORPHAN) ?? 0;
    kube.api.create('admin', 'nodes', undefined, {
      metadata: { name: NODE, labels: {} },
      spec: { providerID: 'aws:///eu-west-1a/i-0000000000000017' },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const set = seedRunnerSet(harness);
    // Each took a job, so the sweep caches its EphemeralRunner's runner id: rule 5's proof.
    for (const name of [ORPHAN, ...HEALTHY])
      seedRunner(
        harness,
        set,
        name,
        {
          phase: 'Running',
          ready: true,
          runnerName: name,
          runnerId: ids.get(name),
          jobRepositoryName: 'acme/app',
          workflowRunId: 7,
          jobDisplayName: 'build',
        },
        { withPod: true },
      );
    // The org's installation, as a webhook of an earlier job told the store.
    await harness.engine.store.recordJob(
      completedJob({
        jobId: 42,
        runId: 7,
        runnerId: 1,
        runnerName: 'an-earlier-runner',
        installationId,
        createdAt: clock.now() - 600_000,
        startedAt: clock.now() - 500_000,
        completedAt: clock.now() - 400_000,
      }),
      clock.now(),
    );

    // A whole pass over the org's runners, then the sweep that reads pages 1 and 2 again.
    for (let i = 0; i <= PAGES / 2; i++) await minute();
    // Just after the scan passed its page, ARC removes the runner's objects but not its
    // registration, which GitHub shows offline from then on: an orphan.
    orphanedAt = clock.now();
    github.actions.runnerStopped(ORPHAN, 'sigterm');
    kube.api.delete('kubelet', 'pods', NS, ORPHAN);
    kube.api.delete('arc', 'ephemeralrunners', NS, ORPHAN);
    // Until it is deleted, or well past the slowest bound: the hourly full relist, plus the grace.
    const until = orphanedAt + FULL_RELIST_MS + GRACE_MS + 5 * MINUTE;
    while (deletes().length === 0 && clock.now() < until) await minute();
    deleted.push(...deletes());
  }, 600_000);
  afterAll(() => harness.stop());

  it('reads 2 of its 6 pages a sweep while its share lasts: a pass every 3 sweeps', () => {
    expect(pagesPerSweep.slice(0, PAGES / 2 + 1)).toEqual([2, 2, 2, 2]);
  });

  it('deletes the orphan once, never before the grace, and by the hourly full relist plus the grace', () => {
    expect(deleted.map((d) => d.target)).toEqual([`orgs/acme/actions/runners/${orphanId}`]);
    expect(harness.remediationEvents()).toContainEqual(
      expect.objectContaining({
        action: 'delete-runner-registration',
        rule: 'rule-5-orphan-registration',
        outcome: 'succeeded',
      }),
    );
    const took = (deleted[0]?.at ?? Infinity) - orphanedAt;
    expect(took).toBeGreaterThanOrEqual(GRACE_MS);
    expect(took).toBeLessThanOrEqual(FULL_RELIST_MS + GRACE_MS);
  });

  // The scan sees the registration offline within a pass, and the sweep decides the namespace
  // of its runner set then, though no Kubernetes object changed (the EphemeralRunner was gone
  // before): rule 5 sets its timer at once, not at the hourly full relist.
  it(`deletes it within ${RUNNERS / 200} minutes plus the grace, as README states`, () => {
    const took = (deleted[0]?.at ?? Infinity) - orphanedAt;
    expect(took).toBeLessThanOrEqual(SCAN_PASS_MS + GRACE_MS);
  });
});
