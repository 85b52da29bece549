import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ArcVersion } from '../../sim/kube/arc/arc-version.js';

const name = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'lower-case letters, digits, - and .');
const seconds = z.number().nonnegative();
const probability = z.number().min(0).max(1);

const nodeSchema = z.strictObject({
  name,
  /** EC2 instance id; the node's providerID is aws:///<zone>/<instanceId>. */
  instanceId: z.string().regex(/^i-[0-9a-f]+$/),
  zone: z.string().default('eu-west-1a'),
  capacityType: z.enum(['spot', 'on-demand']).default('on-demand'),
  /**
   * Managed by Karpenter (`karpenter.sh/nodepool`): Karpenter drains it on a spot warning and
   * deletes it. `false` with `capacityType: spot` is a spot node nobody drains: the instance is
   * reclaimed under its pods 2 minutes after the warning.
   */
  karpenter: z.boolean().default(true),
});

const scaleSetSchema = z.strictObject({
  name,
  namespace: name.default('arc-runners'),
  /** The org (or owner/repo) the scale set registers with. */
  owner: z.string().min(1),
  minRunners: z.number().int().nonnegative().default(0),
  maxRunners: z.number().int().positive().default(10),
  /** `karpenter.sh/do-not-disrupt: "true"` on the runner pod template. */
  doNotDisrupt: z.boolean().default(false),
  /**
   * What the runner does with SIGTERM: `default` (actions/runner fails its job at once),
   * `graceful-stop` (waits up to `gracefulStopTimeoutSeconds` for its job), `none` (the signal
   * never reaches it: SIGKILL at the end of the grace period).
   */
  onSigterm: z.enum(['default', 'graceful-stop', 'none']).default('default'),
  /** `graceful-stop` only: RUNNER_GRACEFUL_STOP_TIMEOUT. */
  gracefulStopTimeoutSeconds: seconds.optional(),
  /** The runner pod's `terminationGracePeriodSeconds` (Kubernetes' default: 30). */
  terminationGracePeriodSeconds: z.number().int().nonnegative().optional(),
  /** Pins every runner of this scale set to one node (`nodeSelector: kubernetes.io/hostname`). */
  node: name.optional(),
  /** The runner image's version tag, e.g. `2.328.0` (see `github.runnerDeprecation`). */
  runnerVersion: z
    .string()
    .regex(/^\d+\.\d+\.\d+$/, 'a runner version such as 2.329.0')
    .optional(),
});

/** runner-medic's shipped Kubernetes grants, for a deployment that lists its runner namespaces. */
export const SHIPPED_RBAC_MANIFESTS = [
  'infra/kubernetes/rbac/cluster.yaml',
  'infra/kubernetes/rbac/runner-namespace.yaml',
] as const;

/** The ARC versions the cluster twin models; every scenario says which one it runs. */
const ARC_VERSIONS = ['0.9', '0.13', '0.15'] as const satisfies readonly ArcVersion[];

const clusterSchema = z.strictObject({
  name,
  /** '0.9' (0.2.0–0.11.0), '0.13' (0.13.1, 0.14.x), '0.15' (0.15.0/0.15.1). */
  arcVersion: z.enum(ARC_VERSIONS),
  /**
   * RBAC is always enforced; runner-medic gets exactly what these manifests grant (paths from the
   * repository root; namespaced documents applied once per runner namespace, as `kubectl apply
   * -n`). Default: the shipped grants, `infra/kubernetes/rbac/cluster.yaml` and
   * `infra/kubernetes/rbac/runner-namespace.yaml`, as docs/deploy.md installs them.
   */
  rbac: z
    .strictObject({ manifests: z.array(z.string().min(1)).min(1) })
    .default({ manifests: [...SHIPPED_RBAC_MANIFESTS] }),
  nodes: z.array(nodeSchema).min(1),
  scaleSets: z.array(scaleSetSchema).min(1),
  /** Karpenter launches a node when pods cannot be scheduled (after its launch time). */
  karpenterProvisioning: z.boolean().default(true),
  /** Pods that are not runners (e.g. a web app), to prove they are never touched. */
  otherPods: z
    .array(
      z.strictObject({
        namespace: name,
        name,
        node: name,
        labels: z.record(z.string(), z.string()).default({}),
      }),
    )
    .default([]),
});

const jobSchema = z.strictObject({
  name: z.string().min(1),
  runsOn: z.string().min(1),
  needs: z.array(z.string()).default([]),
  matrix: z.record(z.string(), z.array(z.union([z.string(), z.number()]))).optional(),
  failFast: z.boolean().default(true),
  durationSeconds: seconds.default(60),
  /** A genuine failure of the job itself. */
  fails: z
    .strictObject({
      afterSeconds: seconds.optional(),
      attempts: z.array(z.number().int().positive()).optional(),
      matrix: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    })
    .optional(),
});

const repoSchema = z.strictObject({
  name: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'owner/name'),
  workflows: z
    .array(z.strictObject({ name: z.string().min(1), jobs: z.array(jobSchema).min(1) }))
    .min(1),
});

/** Which runner pod a fault hits. */
const podTarget = z.union([
  z.strictObject({ runnerOfJob: z.string().min(1) }),
  z.strictObject({ scaleSet: name, state: z.enum(['starting', 'idle', 'any']).default('any') }),
  z.strictObject({ pod: name, namespace: name }),
]);

/** A node by name, or the node running a job's runner at the time of the fault. */
const nodeTarget = { node: name.optional(), nodeOfJob: z.string().min(1).optional() };

/**
 * A fault that follows its job across attempts: it fires on each listed attempt of the job its
 * target names (`runnerOfJob` or `nodeOfJob`), `at` seconds after that attempt started on a
 * runner, instead of once at `at` seconds from the start. A listed attempt that never runs, or
 * ends before then, is not hit.
 */
const onAttempts = {
  onAttempts: z
    .array(z.number().int().positive())
    .min(1)
    .refine((a) => new Set(a).size === a.length, 'each attempt once')
    .optional(),
};

const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('evict-pod'),
    at: seconds,
    cluster: name,
    target: podTarget,
    resource: z.enum(['memory', 'ephemeral-storage', 'pid']).default('memory'),
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('admission-reject'),
    at: seconds,
    cluster: name,
    target: podTarget,
  }),
  z.strictObject({
    kind: z.literal('oom-kill'),
    at: seconds,
    cluster: name,
    target: podTarget,
    ...onAttempts,
  }),
  /**
   * A graceful stop of one pod: deleted through the API with a grace period, so the kubelet sends
   * SIGTERM and SIGKILLs only when the grace period ends (default: the pod's own).
   */
  z.strictObject({
    kind: z.literal('terminate-pod'),
    at: seconds,
    cluster: name,
    target: podTarget,
    gracePeriodSeconds: z.number().int().nonnegative().optional(),
    ...onAttempts,
  }),
  /** A hard kill of one pod's runner: SIGKILL, no chance to tell GitHub (exit 137). */
  z.strictObject({
    kind: z.literal('kill-pod'),
    at: seconds,
    cluster: name,
    target: podTarget,
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('disrupt-node'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    reason: z.enum(['consolidation', 'drift', 'expiry']),
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('spot-interruption'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('delete-node'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('shutdown-node'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    ...onAttempts,
  }),
  /**
   * The kubelet stops reporting: the node goes NotReady/Unknown while its pods still read Running.
   * Its runners keep running their jobs, unless `runners: lose-network` (then they are lost).
   */
  z.strictObject({
    kind: z.literal('node-not-ready'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    runners: z.enum(['keep-running', 'lose-network']).default('keep-running'),
    ...onAttempts,
  }),
  z.strictObject({
    kind: z.literal('node-pressure'),
    at: seconds,
    cluster: name,
    ...nodeTarget,
    condition: z.enum(['MemoryPressure', 'DiskPressure', 'PIDPressure']).default('MemoryPressure'),
    /** How long the condition holds; the kubelet rejects new pods at admission meanwhile. */
    durationSeconds: z.number().positive(),
  }),
  /**
   * The cluster's API endpoint stops answering runner-medic from `at` (until `until`, when
   * given), as an EKS endpoint unreachable from the Lambda's network: `refused` (connections
   * refused) or `503` (every request answered 503 ServiceUnavailable). The cluster itself, ARC
   * and its exporter keep running.
   */
  z.strictObject({
    kind: z.literal('cluster-unreachable'),
    at: seconds,
    cluster: name,
    until: seconds.optional(),
    answer: z.enum(['refused', '503']).default('refused'),
  }),
  /**
   * One exporter event naming a cluster runner-medic is not configured for (`clusterName`, which
   * must not be one of `clusters`), put on runner-medic's bus as kubernetes-event-exporter puts
   * its own: by default a runner pod's `Evicted` event.
   */
  z.strictObject({
    kind: z.literal('unconfigured-cluster-event'),
    at: seconds,
    clusterName: name,
    namespace: name.default('arc-runners'),
    pod: name,
    reason: z.string().min(1).default('Evicted'),
    message: z.string().default('The node was low on resource: memory. '),
    /** The pod's labels as the exporter's lookup would add them (default: an ARC runner's). */
    labels: z.record(z.string(), z.string()).optional(),
  }),
]);

const expectedJob = z.strictObject({
  name: z.string().min(1),
  /** Which run (index into `runs`); default every run with a job of that name. */
  run: z.number().int().nonnegative().optional(),
  status: z.enum(['queued', 'in_progress', 'completed', 'waiting']).optional(),
  conclusion: z.enum(['success', 'failure', 'cancelled', 'skipped']).nullable().optional(),
  /** Attempts of the run when it ended. */
  attempts: z.number().int().positive().optional(),
  /** Simulated seconds from the loss to recovery, at most. */
  maxRecoverySeconds: seconds.optional(),
  /** Simulated seconds from the loss to runner-medic's first action on it, at most. */
  maxActionSeconds: seconds.optional(),
  /** Whether the job is lost at all (a runner it ran on stopped abnormally). */
  lost: z.boolean().optional(),
  /** Whether it recovered (ran again on a healthy runner, or a re-run was accepted). */
  recovered: z.boolean().optional(),
});

/** A runner-medic audit event (detail-type `Remediation`) that must appear. */
const expectedAuditEvent = z.strictObject({
  /** The action kind, e.g. `rerun-failed-jobs`, `delete-ephemeral-runner`, `report-starvation`. */
  kind: z.string().min(1),
  rule: z.string().min(1).optional(),
  outcome: z
    .enum(['claimed', 'succeeded', 'retry-later', 'gave-up', 'failed', 'dry-run'])
    .optional(),
  /** Exactly this many matching events (default: at least one). */
  count: z.number().int().nonnegative().optional(),
});

const expectationSchema = z.strictObject({
  jobs: z.array(expectedJob).default([]),
  /** Most mutating calls runner-medic may make. */
  maxActions: z.number().int().nonnegative().optional(),
  /**
   * Most Kubernetes reads (GET requests: gets, lists, watches) runner-medic may make over the
   * play, where the cluster twin logs its requests.
   */
  maxKubeReads: z.number().int().nonnegative().optional(),
  /** Each verb given must appear among runner-medic's actions at least once. */
  actionVerbs: z.array(z.string()).default([]),
  /** Exactly this many runner-medic mutating calls per verb (`delete`, `rerun-failed-jobs`, …). */
  calls: z.record(z.string(), z.number().int().nonnegative()).default({}),
  /** runner-medic's audit events that must (or, with `count: 0`, must not) appear. */
  auditEvents: z.array(expectedAuditEvent).default([]),
  /** Namespaces no runner-medic Kubernetes call may touch. */
  untouchedNamespaces: z.array(name).default([]),
});

const seconds_or_null = seconds.nullable();

/** GitHub's behaviour beyond the plain rules (sim/github); every default is the measured figure. */
const githubSchema = z.strictObject({
  /** The lost-runner job lock, from the last renewal (GAG measured 9m36s–9m45s). */
  lockTtlSeconds: z.number().positive().default(576),
  /** A SIGTERMed busy runner's job concludes this long after (GAG measured 15–26 s). */
  gracefulStopConcludeSeconds: seconds.default(20),
  /** A force-cancelled job on a dead runner concludes this long after (GAG: about 1 s). */
  forceCancelConcludeSeconds: seconds.default(1),
  /** `403 already running` persists this long after the run completed (GAG: ~20 paced calls). */
  alreadyRunningAfterCompletionSeconds: seconds.default(0),
  /** Cancels refused as real GitHub sometimes refuses them. */
  cancelFailures: z
    .array(
      z.strictObject({
        verb: z.enum(['cancel', 'force-cancel']),
        /** 500 `Failed to cancel workflow run`; 409 `Cannot cancel a workflow re-run that has not yet queued.` */
        status: z.union([z.literal(500), z.literal(409)]),
        fromSeconds: seconds.optional(),
        untilSeconds: seconds.optional(),
        times: z.number().int().positive().optional(),
      }),
    )
    .default([]),
  /** Runner version enforcement: runners below `below` get no jobs from `runtimeAtSeconds` on. */
  runnerDeprecation: z
    .strictObject({
      below: z.string().regex(/^\d+\.\d+\.\d+$/, 'a runner version such as 2.329.0'),
      runtimeAtSeconds: seconds.default(0),
      registrationAtSeconds: seconds_or_null.default(null),
    })
    .optional(),
});

const scenarioSchema = z.strictObject({
  name,
  description: z.string().default(''),
  seed: z.union([z.number().int(), z.string()]).default(1),
  /** How long to simulate after the first run starts. */
  durationSeconds: seconds.default(3600),
  clusters: z.array(clusterSchema).min(1),
  repos: z.array(repoSchema).min(1),
  runs: z.array(z.strictObject({ at: seconds, repo: z.string(), workflow: z.string() })).min(1),
  faults: z.array(faultSchema).default([]),
  github: githubSchema.prefault({}),
  rates: z
    .strictObject({
      webhookDrop: probability.default(0),
      webhookDuplicate: probability.default(0),
      webhookReorder: probability.default(0),
      webhookDelaySeconds: seconds.default(0),
      eventDrop: probability.default(0),
      eventDuplicate: probability.default(0),
      eventReorder: probability.default(0),
      githubServerErrors: probability.default(0),
      /** Share of runner-medic's Kubernetes API requests answered 503. */
      kubeServerErrors: probability.default(0),
    })
    .prefault({}),
  remediation: z
    .strictObject({
      /** A runner-medic policy document (functions/domain/policy/policy.ts). */
      policy: z.record(z.string(), z.unknown()).default({}),
      /** How often the reconcile sweep runs. */
      sweepSeconds: z.number().positive().default(60),
    })
    .prefault({}),
  expect: z
    .strictObject({
      baseline: expectationSchema.prefault({}),
      remediation: expectationSchema.prefault({}),
    })
    .prefault({}),
});

export type Scenario = z.output<typeof scenarioSchema>;
export type ScenarioFault = Scenario['faults'][number];
/** A fault applied inside one configured cluster (every kind but `unconfigured-cluster-event`). */
export type ClusterFault = Exclude<ScenarioFault, { kind: 'unconfigured-cluster-event' }>;
export type PodTarget = z.output<typeof podTarget>;
export type Expectation = z.output<typeof expectationSchema>;

export class ScenarioError extends Error {
  readonly problems: string[];

  constructor(file: string, problems: string[]) {
    super(`${file}: invalid scenario\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ScenarioError';
    this.problems = problems;
  }
}

/** Parses and validates a scenario document; every problem is reported with its key path. */
export function parseScenario(text: string, file = 'scenario'): Scenario {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new ScenarioError(file, [`not valid YAML: ${(error as Error).message}`]);
  }
  const parsed = scenarioSchema.safeParse(doc);
  if (!parsed.success) {
    throw new ScenarioError(
      file,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  }
  const problems = crossCheck(parsed.data);
  if (problems.length > 0) throw new ScenarioError(file, problems);
  return parsed.data;
}

export async function loadScenario(file: string): Promise<Scenario> {
  return parseScenario(await readFile(file, 'utf8'), file);
}

const NODE_FAULTS = new Set([
  'node-not-ready',
  'disrupt-node',
  'spot-interruption',
  'delete-node',
  'shutdown-node',
  'node-pressure',
]);

/** The job and attempts a fault follows (`onAttempts`), when it does and its target names a job. */
export function followedAttempts(
  f: ScenarioFault,
): { job: string; attempts: number[] } | undefined {
  if (!('onAttempts' in f) || !f.onAttempts) return undefined;
  const job =
    'target' in f
      ? 'runnerOfJob' in f.target
        ? f.target.runnerOfJob
        : undefined
      : 'nodeOfJob' in f
        ? f.nodeOfJob
        : undefined;
  return job === undefined ? undefined : { job, attempts: f.onAttempts };
}

/** References between sections: clusters, nodes, repos and workflows named must exist. */
function crossCheck(s: Scenario): string[] {
  const problems: string[] = [];
  const clusters = new Map(s.clusters.map((c) => [c.name, c]));
  s.faults.forEach((f, i) => {
    if (f.kind === 'unconfigured-cluster-event') {
      if (clusters.has(f.clusterName))
        problems.push(
          `faults.${i}.clusterName: ${f.clusterName} is a configured cluster; name one that is not`,
        );
      return undefined;
    }
    if ('onAttempts' in f && f.onAttempts && !followedAttempts(f))
      problems.push(`faults.${i}.onAttempts: only with target runnerOfJob or nodeOfJob`);
    if (f.kind === 'cluster-unreachable' && f.until !== undefined && f.until <= f.at)
      problems.push(`faults.${i}.until: must be after at (${f.at})`);
    const cluster = clusters.get(f.cluster);
    if (!cluster) return problems.push(`faults.${i}.cluster: no cluster named ${f.cluster}`);
    if (NODE_FAULTS.has(f.kind)) {
      const node = 'node' in f ? f.node : undefined;
      const ofJob = 'nodeOfJob' in f ? f.nodeOfJob : undefined;
      if ((node === undefined) === (ofJob === undefined)) {
        problems.push(`faults.${i}: give exactly one of node or nodeOfJob`);
      } else if (node !== undefined && !cluster.nodes.some((n) => n.name === node)) {
        problems.push(`faults.${i}.node: no node ${node} in cluster ${f.cluster}`);
      }
    }
    return undefined;
  });
  s.clusters.forEach((c, i) =>
    c.scaleSets.forEach((set, j) => {
      if (set.node !== undefined && !c.nodes.some((n) => n.name === set.node))
        problems.push(
          `clusters.${i}.scaleSets.${j}.node: no node ${set.node} in cluster ${c.name}`,
        );
      if (set.gracefulStopTimeoutSeconds !== undefined && set.onSigterm !== 'graceful-stop')
        problems.push(
          `clusters.${i}.scaleSets.${j}.gracefulStopTimeoutSeconds: only with onSigterm: graceful-stop`,
        );
    }),
  );
  (['baseline', 'remediation'] as const).forEach((which) =>
    s.expect[which].jobs.forEach((job, i) => {
      if (job.run !== undefined && job.run >= s.runs.length)
        problems.push(`expect.${which}.jobs.${i}.run: no run ${job.run} (${s.runs.length} runs)`);
    }),
  );
  s.runs.forEach((r, i) => {
    const repo = s.repos.find((x) => x.name === r.repo);
    if (!repo) problems.push(`runs.${i}.repo: no repo ${r.repo}`);
    else if (!repo.workflows.some((w) => w.name === r.workflow)) {
      problems.push(`runs.${i}.workflow: no workflow ${r.workflow} in ${r.repo}`);
    }
  });
  return problems;
}
