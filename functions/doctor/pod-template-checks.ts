/**
 * Checks a runner pod, or the pod template of a scale set, for the settings that let a busy runner
 * survive a node disruption: infra/kubernetes/runner/README.md explains each setting, and
 * values-karpenter.yaml beside it shows them all together.
 *
 * Pure: no SDK, no I/O. A doctor reads the objects and calls, for each one,
 *
 *   const template = runnerPodTemplateOf(object); // a Pod, AutoscalingRunnerSet, EphemeralRunnerSet,
 *                                                 // EphemeralRunner or a bare { metadata, spec }
 *   if (template) checkRunnerPodTemplate(template, { nodeLabels, karpenterManaged, kubernetesVersion });
 *
 * and gets one result per check, in the order of POD_TEMPLATE_CHECK_IDS, each with what is wrong
 * (or right), why it matters and what to do.
 */

export const POD_TEMPLATE_CHECK_IDS = [
  'graceful-stop',
  'termination-grace-period',
  'dind-sidecar',
  'karpenter-do-not-disrupt',
] as const;

export type PodTemplateCheckId = (typeof POD_TEMPLATE_CHECK_IDS)[number];

export interface PodTemplateCheckResult {
  id: PodTemplateCheckId;
  status: 'ok' | 'finding';
  /** What the check saw, and why it matters. */
  why: string;
  /** What to do about it ("Nothing to do." when ok). */
  what: string;
}

export interface PodTemplateCheckContext {
  /** Labels of the node a running pod is on; Karpenter labels its nodes `karpenter.sh/nodepool`. */
  nodeLabels?: Record<string, string>;
  /** The caller knows these pods land on Karpenter-managed nodes (or knows they do not). */
  karpenterManaged?: boolean;
  /** The cluster's version: native sidecars (restartPolicy Always on an init container) need 1.29. */
  kubernetesVersion?: { major: number; minor: number };
}

interface RunnerContainer {
  name: string;
  image?: string;
  command: string[];
  args: string[];
  /** Literal env values; a value from a reference (valueFrom) is `undefined`. */
  env: Map<string, string | undefined>;
  hasPreStop: boolean;
  restartPolicy?: string;
}

export interface RunnerPodTemplate {
  annotations: Record<string, string>;
  containers: RunnerContainer[];
  initContainers: RunnerContainer[];
  terminationGracePeriodSeconds?: number;
  nodeSelector: Record<string, string>;
  /** Keys of the required node-affinity match expressions. */
  requiredNodeAffinityKeys: string[];
}

/** The runner's start command wrapped by graceful-stop.sh (infra/kubernetes/runner). */
const GRACEFUL_STOP = /graceful-stop/;
/** graceful-stop.sh's own default for RUNNER_GRACEFUL_STOP_TIMEOUT. */
const DEFAULT_GRACEFUL_STOP_TIMEOUT_SECONDS = 15;
/** Kubernetes' default terminationGracePeriodSeconds. */
const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;
/**
 * Time the pod needs after the wait, while the job is cancelled: the runner interrupts each step
 * process, escalates to SIGTERM after 7.5 s and kills it 2.5 s later (actions/runner
 * src/Runner.Sdk/ProcessInvoker.cs), then uploads logs and reports the job, and the listener exits.
 */
const CANCEL_MARGIN_SECONDS = 30;
const KARPENTER_NODE_LABELS = ['karpenter.sh/nodepool', 'karpenter.sh/provisioner-name'];
const KARPENTER_LABEL_PREFIXES = ['karpenter.sh/', 'karpenter.k8s.aws/'];
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
const NOTHING_TO_DO = 'Nothing to do.';

type Json = Record<string, unknown>;

function record(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Json)
    : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record(value) ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

function containerOf(value: unknown): RunnerContainer | undefined {
  const c = record(value);
  if (!c || typeof c.name !== 'string') return undefined;
  const env = new Map<string, string | undefined>();
  for (const item of Array.isArray(c.env) ? c.env : []) {
    const e = record(item);
    if (e && typeof e.name === 'string')
      env.set(e.name, typeof e.value === 'string' ? e.value : e.valueFrom ? undefined : '');
  }
  return {
    name: c.name,
    image: typeof c.image === 'string' ? c.image : undefined,
    command: strings(c.command),
    args: strings(c.args),
    env,
    hasPreStop: record(record(c.lifecycle)?.preStop) !== undefined,
    restartPolicy: typeof c.restartPolicy === 'string' ? c.restartPolicy : undefined,
  };
}

function containersOf(value: unknown): RunnerContainer[] {
  return (Array.isArray(value) ? value : [])
    .map(containerOf)
    .filter((c): c is RunnerContainer => c !== undefined);
}

function requiredAffinityKeys(affinity: unknown): string[] {
  const required = record(
    record(record(affinity)?.nodeAffinity)?.requiredDuringSchedulingIgnoredDuringExecution,
  );
  const terms = Array.isArray(required?.nodeSelectorTerms) ? required.nodeSelectorTerms : [];
  return terms.flatMap((term) => {
    const expressions = record(term)?.matchExpressions;
    return (Array.isArray(expressions) ? expressions : [])
      .map((e) => record(e)?.key)
      .filter((k): k is string => typeof k === 'string');
  });
}

function templateFrom(metadata: unknown, spec: unknown): RunnerPodTemplate | undefined {
  const s = record(spec);
  const containers = containersOf(s?.containers);
  if (!s || containers.length === 0) return undefined;
  const grace = s.terminationGracePeriodSeconds;
  return {
    annotations: stringMap(record(metadata)?.annotations),
    containers,
    initContainers: containersOf(s.initContainers),
    terminationGracePeriodSeconds: typeof grace === 'number' ? grace : undefined,
    nodeSelector: stringMap(s.nodeSelector),
    requiredNodeAffinityKeys: requiredAffinityKeys(s.affinity),
  };
}

/**
 * The pod template inside any object a doctor meets: a Pod, an AutoscalingRunnerSet
 * (spec.template), an EphemeralRunnerSet (spec.ephemeralRunnerSpec), an EphemeralRunner (its spec
 * embeds the template) or a bare `{ metadata, spec }`, such as the `template:` of the Helm values.
 * `undefined` when the object holds no pod spec with containers.
 */
export function runnerPodTemplateOf(object: unknown): RunnerPodTemplate | undefined {
  const o = record(object);
  if (!o) return undefined;
  const spec = record(o.spec);
  switch (o.kind) {
    case 'AutoscalingRunnerSet': {
      const t = record(spec?.template);
      return templateFrom(t?.metadata, t?.spec);
    }
    case 'EphemeralRunnerSet': {
      const er = record(spec?.ephemeralRunnerSpec);
      return templateFrom(er?.metadata, er?.spec);
    }
    case 'EphemeralRunner':
      return templateFrom(spec?.metadata, spec?.spec);
    default:
      return templateFrom(o.metadata, o.spec);
  }
}

/** ARC treats the container named "runner" as the runner (gha-runner-scale-set's templates). */
function runnerContainer(t: RunnerPodTemplate): RunnerContainer {
  return t.containers.find((c) => c.name === 'runner') ?? (t.containers[0] as RunnerContainer);
}

function usesGracefulStop(c: RunnerContainer): boolean {
  return [...c.command, ...c.args].some((part) => GRACEFUL_STOP.test(part));
}

function isDind(c: RunnerContainer): boolean {
  const program = (c.command[0] ?? c.args[0] ?? '').split('/').pop() ?? '';
  return (
    c.name === 'dind' ||
    (c.image ?? '').includes('dind') ||
    program === 'dockerd' ||
    program === 'dockerd-entrypoint.sh'
  );
}

function checkGracefulStop(t: RunnerPodTemplate): PodTemplateCheckResult {
  const runner = runnerContainer(t);
  if (usesGracefulStop(runner)) {
    return {
      id: 'graceful-stop',
      status: 'ok',
      why: `Container "${runner.name}" runs through graceful-stop.sh: on SIGTERM a running job gets up to RUNNER_GRACEFUL_STOP_TIMEOUT to finish, and an idle listener is stopped at once.`,
      what: NOTHING_TO_DO,
    };
  }
  if (runner.hasPreStop) {
    return {
      id: 'graceful-stop',
      status: 'ok',
      why: `Container "${runner.name}" has a preStop hook, taken to wait for Runner.Worker to exit before Kubernetes sends SIGTERM.`,
      what: NOTHING_TO_DO,
    };
  }
  return {
    id: 'graceful-stop',
    status: 'finding',
    why: `Container "${runner.name}" has neither the graceful-stop entrypoint nor a preStop hook. On SIGTERM the image's run.sh interrupts the listener and the worker at once, so a running job fails with "The runner has received a shutdown signal" and has to be re-run.`,
    what: "Mount infra/kubernetes/runner/graceful-stop.sh from a ConfigMap and make it the runner container's command, with RUNNER_ENTRYPOINT=/home/runner/run.sh (values-karpenter.yaml shows how), or add a preStop hook that waits for Runner.Worker to exit.",
  };
}

/**
 * How long the runner waits for a job on SIGTERM: seconds; 'unknown' when it comes from a reference
 * or a preStop hook; 'none' without any graceful stop; or the invalid value given.
 */
type StopTimeout = number | 'unknown' | 'none' | { invalid: string };

function stopTimeout(runner: RunnerContainer): StopTimeout {
  if (runner.env.has('RUNNER_GRACEFUL_STOP_TIMEOUT')) {
    const value = runner.env.get('RUNNER_GRACEFUL_STOP_TIMEOUT');
    if (value === undefined) return 'unknown';
    return /^[0-9]{1,7}$/.test(value) ? Number(value) : { invalid: value };
  }
  if (usesGracefulStop(runner)) return DEFAULT_GRACEFUL_STOP_TIMEOUT_SECONDS;
  return runner.hasPreStop ? 'unknown' : 'none';
}

function checkGracePeriod(t: RunnerPodTemplate): PodTemplateCheckResult {
  const id = 'termination-grace-period';
  const grace = t.terminationGracePeriodSeconds;
  const timeout = stopTimeout(runnerContainer(t));
  if (typeof timeout === 'object') {
    return {
      id,
      status: 'finding',
      why: `RUNNER_GRACEFUL_STOP_TIMEOUT is "${timeout.invalid}", not a whole number of seconds: graceful-stop.sh refuses it and does not start the runner.`,
      what: 'Set RUNNER_GRACEFUL_STOP_TIMEOUT to a whole number of seconds, such as "1800".',
    };
  }
  const wanted = typeof timeout === 'number' ? timeout + CANCEL_MARGIN_SECONDS : undefined;
  const advice = `Set terminationGracePeriodSeconds to RUNNER_GRACEFUL_STOP_TIMEOUT plus at least ${CANCEL_MARGIN_SECONDS} s${wanted === undefined ? '' : ` (${wanted} or more here)`}, leaving time to cancel a job that outlives the wait.`;
  if (grace === undefined || grace === KUBERNETES_DEFAULT_GRACE_SECONDS) {
    return {
      id,
      status: 'finding',
      why: `terminationGracePeriodSeconds is ${grace === undefined ? 'not set, so it is ' : ''}Kubernetes' default ${KUBERNETES_DEFAULT_GRACE_SECONDS} s: SIGKILL ends any job still running 30 s after SIGTERM, and a runner killed that way leaves its job in progress for about 10 minutes before GitHub fails it.`,
      what: advice,
    };
  }
  if (typeof timeout === 'number' && grace < timeout + CANCEL_MARGIN_SECONDS) {
    return {
      id,
      status: 'finding',
      why:
        grace <= timeout
          ? `terminationGracePeriodSeconds (${grace}) is not above RUNNER_GRACEFUL_STOP_TIMEOUT (${timeout}): SIGKILL arrives while the runner still waits for its job, so the job is killed hard and stays in progress for about 10 minutes.`
          : `terminationGracePeriodSeconds (${grace}) leaves less than ${CANCEL_MARGIN_SECONDS} s after RUNNER_GRACEFUL_STOP_TIMEOUT (${timeout}) for cancelling a job that outlives the wait: SIGKILL can cut the cancellation short.`,
      what: advice,
    };
  }
  const why = {
    unknown: `terminationGracePeriodSeconds is ${grace}; the stop timeout is not visible here (a reference or a preStop hook), so check it stays at least ${CANCEL_MARGIN_SECONDS} s below that.`,
    none: `terminationGracePeriodSeconds is ${grace}, but nothing waits for a running job (see the graceful-stop check).`,
  };
  return {
    id,
    status: 'ok',
    why:
      typeof timeout === 'number'
        ? `terminationGracePeriodSeconds (${grace}) covers the ${timeout} s wait for a job plus ${grace - timeout} s to cancel one that outlives it.`
        : why[timeout],
    what: NOTHING_TO_DO,
  };
}

function supportsNativeSidecars(context: PodTemplateCheckContext): boolean | undefined {
  const v = context.kubernetesVersion;
  if (!v) return undefined;
  return v.major > 1 || (v.major === 1 && v.minor >= 29);
}

function checkDind(t: RunnerPodTemplate, context: PodTemplateCheckContext): PodTemplateCheckResult {
  const id = 'dind-sidecar';
  const sidecar = t.initContainers.find((c) => isDind(c) && c.restartPolicy === 'Always');
  if (sidecar) {
    return {
      id,
      status: 'ok',
      why: `dind ("${sidecar.name}") is a native sidecar: Kubernetes stops it only after the runner container has exited, so the docker socket outlives the job.`,
      what: NOTHING_TO_DO,
    };
  }
  const blockingInit = t.initContainers.find(isDind);
  if (blockingInit) {
    return {
      id,
      status: 'finding',
      why: `dind ("${blockingInit.name}") is an init container without restartPolicy: Always: init containers must finish before the runner starts, and dockerd never does.`,
      what: 'Add restartPolicy: Always to the dind init container (Kubernetes 1.29 or later) to make it a native sidecar.',
    };
  }
  const plain = t.containers.find(isDind);
  if (!plain) {
    return { id, status: 'ok', why: 'The pod runs no dind container.', what: NOTHING_TO_DO };
  }
  const native = supportsNativeSidecars(context);
  if (plain.hasPreStop && native !== true) {
    return {
      id,
      status: 'ok',
      why: `dind ("${plain.name}") is a plain container with a preStop hook, taken to hold dockerd until the runner has exited (the variant for clusters before 1.29, which have no native sidecars).`,
      what: NOTHING_TO_DO,
    };
  }
  return {
    id,
    status: 'finding',
    why: `dind ("${plain.name}") is a plain container${plain.hasPreStop ? ' (with a preStop hook)' : ''}: on pod deletion it gets SIGTERM together with the runner, so dockerd and its socket can go while the job's last steps still use them, and the build breaks.`,
    what:
      native === false
        ? 'Give the dind container a preStop hook that waits until the runner has exited (values-karpenter-before-1.29.yaml), or upgrade to Kubernetes 1.29+ and run dind as a native sidecar.'
        : "Move dind to initContainers with restartPolicy: Always (a native sidecar, Kubernetes 1.29+), as values-karpenter.yaml and ARC's own containerMode: dind do.",
  };
}

/** Whether a Go duration (time.ParseDuration's syntax) is valid and above zero. */
export function isPositiveGoDuration(value: string): boolean {
  const match = /^([-+]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(value);
  if (!match || match[1] === '-') return false;
  return [...(match[2] ?? '').matchAll(/(\d+(?:\.\d*)?|\.\d+)/g)].some((m) => Number(m[1]) > 0);
}

function karpenterManaged(t: RunnerPodTemplate, context: PodTemplateCheckContext): boolean {
  if (context.karpenterManaged !== undefined) return context.karpenterManaged;
  const nodeLabels = Object.keys(context.nodeLabels ?? {});
  if (KARPENTER_NODE_LABELS.some((l) => nodeLabels.includes(l))) return true;
  const selected = [...Object.keys(t.nodeSelector), ...t.requiredNodeAffinityKeys];
  return selected.some((key) => KARPENTER_LABEL_PREFIXES.some((p) => key.startsWith(p)));
}

function checkDoNotDisrupt(
  t: RunnerPodTemplate,
  context: PodTemplateCheckContext,
): PodTemplateCheckResult {
  const id = 'karpenter-do-not-disrupt';
  const limits =
    'It blocks consolidation and drift only: expiry past the NodePool terminationGracePeriod, spot interruption, node repair and forced termination still stop busy runners, and runner-medic re-runs what they kill.';
  if (!karpenterManaged(t, context)) {
    return {
      id,
      status: 'ok',
      why: 'Nothing shows these pods on Karpenter-managed nodes (no karpenter.sh node label, selector or required affinity), so karpenter.sh/do-not-disrupt would have no effect.',
      what: NOTHING_TO_DO,
    };
  }
  const value = t.annotations[DO_NOT_DISRUPT];
  if (value === 'true') {
    return {
      id,
      status: 'ok',
      why: `karpenter.sh/do-not-disrupt is "true": Karpenter does not consolidate or drift this runner's node away while the pod runs. ${limits}`,
      what: NOTHING_TO_DO,
    };
  }
  if (value !== undefined && isPositiveGoDuration(value)) {
    return {
      id,
      status: 'ok',
      why: `karpenter.sh/do-not-disrupt is "${value}": the node is protected for that long after the pod is created, then no longer. ${limits}`,
      what: NOTHING_TO_DO,
    };
  }
  return {
    id,
    status: 'finding',
    why:
      value === undefined
        ? "The pods land on Karpenter-managed nodes without karpenter.sh/do-not-disrupt: consolidation or drift can take a busy runner's node and SIGTERM the job."
        : `karpenter.sh/do-not-disrupt is "${value}", neither "true" nor a positive duration: Karpenter treats it as absent (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go).`,
    what: `Set the pod template annotation karpenter.sh/do-not-disrupt: "true" (values-karpenter.yaml). ${limits}`,
  };
}

/** Runs every check over one pod template; one result per check, in POD_TEMPLATE_CHECK_IDS order. */
export function checkRunnerPodTemplate(
  template: RunnerPodTemplate,
  context: PodTemplateCheckContext = {},
): PodTemplateCheckResult[] {
  return [
    checkGracefulStop(template),
    checkGracePeriod(template),
    checkDind(template, context),
    checkDoNotDisrupt(template, context),
  ];
}
