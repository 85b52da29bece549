import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  VersionApi,
} from '@kubernetes/client-node';
import { KUBE_ACCESS } from '../adapters/kubernetes/kube-access.js';
import {
  EPHEMERAL_RUNNERS,
  RUNNER_POD_SELECTOR,
} from '../adapters/kubernetes/kube-cluster-gateway.js';
import type { CheckResult } from './doctor-check.js';
import { describeError, failed, finding, listed, ok, unreachable } from './doctor-check.js';
import type { PodTemplateCheckId, PodTemplateCheckResult } from './pod-template-checks.js';
import {
  POD_TEMPLATE_CHECK_IDS,
  checkRunnerPodTemplate,
  runnerPodTemplateOf,
} from './pod-template-checks.js';
import { RunnerMedicError } from '../ports/errors.js';

const SCALE_SET_LABEL = 'actions.github.com/scale-set-name';
const VERSION_LABEL = 'app.kubernetes.io/version';
/** An EphemeralRunner older than this has had time to get its pod (ARC creates it at once). */
const POD_EXPECTED_AFTER_MS = 2 * 60_000;
/** No call to a cluster waits longer than this: an unreachable endpoint must not hang the doctor. */
const CALL_TIMEOUT_MS = 10_000;

/** The parts of an EphemeralRunner the doctor reads. */
interface EphemeralRunnerObject {
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    labels?: Record<string, string>;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
  };
  spec?: unknown;
  status?: { phase?: string; reason?: string; message?: string };
}

/** What the doctor read of one cluster: the runner namespaces' ERs and pods, and the nodes. */
export interface ClusterSnapshot {
  kubernetesVersion: { major: number; minor: number } | undefined;
  runners: EphemeralRunnerObject[];
  pods: V1Pod[];
  nodes: V1Node[];
}

/** `call`, or an `unavailable` error once it has not answered within 10 s. */
export function withTimeout<T>(call: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new RunnerMedicError(
            'unavailable',
            `${what}: no answer within ${CALL_TIMEOUT_MS / 1000} s`,
          ),
        ),
      CALL_TIMEOUT_MS,
    );
  });
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}

function time(value: string | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The HTTP status of a client-node ApiException, if it is one. */
export function kubeStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** What one SelfSubjectAccessReview asks (authorization.k8s.io/v1 ResourceAttributes). */
export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/**
 * Each `KubeAccess` the adapter declares that this cluster's configuration uses, as the
 * SelfSubjectAccessReview attributes to ask for: namespaced calls once per runner namespace.
 */
export function accessToReview(namespaces: readonly string[] | undefined): AccessAttributes[] {
  const scoped = namespaces !== undefined && namespaces.length > 0;
  return KUBE_ACCESS.filter((a) => a.when === 'always' || !scoped).flatMap((a) => {
    const base = {
      verb: a.verb,
      group: a.group,
      resource: a.resource,
      ...(a.subresource ? { subresource: a.subresource } : {}),
    };
    if (a.scope === 'cluster') return [base];
    return scoped ? namespaces.map((namespace) => ({ ...base, namespace })) : [base];
  });
}

/** "patch actions.github.com/ephemeralrunners in arc-runners", as a finding names a denied call. */
export function describeAccess(a: AccessAttributes): string {
  const resource = `${a.group ? `${a.group}/` : ''}${a.resource}${a.subresource ? `/${a.subresource}` : ''}`;
  const name = a.name ? ` ${a.name}` : '';
  return `${a.verb} ${resource}${name}${a.namespace ? ` in ${a.namespace}` : ' (cluster-wide)'}`;
}

/**
 * Asks the API server, one SelfSubjectAccessReview each (as `kubectl auth can-i` does), which of
 * these calls the caller's own identity may not make. Throws when a review cannot be made.
 */
export async function deniedAccess(
  kc: KubeConfig,
  attributes: readonly AccessAttributes[],
): Promise<AccessAttributes[]> {
  const api = kc.makeApiClient(AuthorizationV1Api);
  const denied: AccessAttributes[] = [];
  for (const resourceAttributes of attributes) {
    const review = await withTimeout(
      api.createSelfSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes },
        },
      }),
      'SelfSubjectAccessReview',
    );
    if (!review.status?.allowed) denied.push(resourceAttributes);
  }
  return denied;
}

export interface ClusterCheckOptions {
  cluster: string;
  kubeConfig: () => Promise<KubeConfig>;
  /** The cluster's runner namespaces; undefined: every namespace. */
  namespaces: readonly string[] | undefined;
  now: number;
}

/** Reachability and RBAC, then the reads the other checks work on (undefined when they failed). */
export async function inspectCluster(
  options: ClusterCheckOptions,
): Promise<{ checks: CheckResult[]; snapshot: ClusterSnapshot | undefined }> {
  const prefix = `cluster.${options.cluster}`;
  const checks: CheckResult[] = [];
  let kc: KubeConfig;
  let kubernetesVersion: ClusterSnapshot['kubernetesVersion'];
  try {
    kc = await options.kubeConfig();
    const version = await withTimeout(kc.makeApiClient(VersionApi).getCode(), 'GET /version');
    const minor = Number.parseInt(version.minor, 10);
    const major = Number.parseInt(version.major, 10);
    kubernetesVersion = Number.isNaN(major) || Number.isNaN(minor) ? undefined : { major, minor };
    checks.push(
      ok(`${prefix}.reachable`, `The API server answers: Kubernetes ${version.gitVersion}.`),
    );
  } catch (error) {
    checks.push(
      unreachable(
        `${prefix}.reachable`,
        `Cannot reach the cluster's API server: ${describeError(error)}. runner-medic can neither see nor repair its runners.`,
        'Check the cluster entry in CLUSTERS (kubeconfig, or the EKS name and region), the endpoint’s network path and the credentials.',
      ),
    );
    return { checks, snapshot: undefined };
  }

  checks.push(await checkRbac(prefix, kc, options.namespaces));

  try {
    const snapshot = await readCluster(kc, options.namespaces, kubernetesVersion);
    return { checks, snapshot };
  } catch (error) {
    const status = kubeStatus(error);
    checks.push(
      status === 401 || status === 403 || status === 404
        ? failed(
            `${prefix}.read`,
            `Cannot read the runners, pods or nodes the other checks need: ${describeError(error)}.`,
            'Grant the RBAC in infra/kubernetes/rbac (see the rbac check), then run the doctor again.',
          )
        : unreachable(
            `${prefix}.read`,
            `The cluster stopped answering while being read: ${describeError(error)}.`,
            'Run the doctor again; if it persists, check the API server’s health.',
          ),
    );
    return { checks, snapshot: undefined };
  }
}

async function checkRbac(
  prefix: string,
  kc: KubeConfig,
  namespaces: readonly string[] | undefined,
): Promise<CheckResult> {
  const id = `${prefix}.rbac`;
  let denied: AccessAttributes[];
  try {
    denied = await deniedAccess(kc, accessToReview(namespaces));
  } catch (error) {
    return failed(
      id,
      `Cannot ask the API server what runner-medic may do (SelfSubjectAccessReview): ${describeError(error)}.`,
      'Check that the identity may create selfsubjectaccessreviews (every authenticated user may, by default).',
    );
  }
  return denied.length > 0
    ? finding(
        id,
        `runner-medic's identity is denied calls its adapter makes (functions/adapters/kubernetes/kube-access.ts): ${listed(denied.map(describeAccess), 8)}. The sweep or a remediation fails there with 403.`,
        'Apply infra/kubernetes/rbac/cluster.yaml once and runner-namespace.yaml in each runner namespace (or all-namespaces.yaml when CLUSTERS lists no namespaces).',
      )
    : ok(id, 'Every call the adapter makes is allowed (SelfSubjectAccessReview for each).');
}

async function readCluster(
  kc: KubeConfig,
  namespaces: readonly string[] | undefined,
  kubernetesVersion: ClusterSnapshot['kubernetesVersion'],
): Promise<ClusterSnapshot> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const runners: EphemeralRunnerObject[] = [];
  const pods: V1Pod[] = [];
  for (const namespace of namespaces && namespaces.length > 0 ? namespaces : [undefined]) {
    const ers = (await withTimeout(
      namespace
        ? custom.listNamespacedCustomObject({ ...EPHEMERAL_RUNNERS, namespace })
        : custom.listClusterCustomObject({ ...EPHEMERAL_RUNNERS }),
      'list EphemeralRunners',
    )) as { items?: EphemeralRunnerObject[] };
    runners.push(...(ers.items ?? []).map((er) => ({ ...er, kind: 'EphemeralRunner' })));
    const podList = await withTimeout(
      namespace
        ? core.listNamespacedPod({ namespace, labelSelector: RUNNER_POD_SELECTOR })
        : core.listPodForAllNamespaces({ labelSelector: RUNNER_POD_SELECTOR }),
      'list runner pods',
    );
    pods.push(...podList.items);
  }
  const nodes = (await withTimeout(core.listNode(), 'list nodes')).items;
  return { kubernetesVersion, runners, pods, nodes };
}

function scaleSetOf(er: EphemeralRunnerObject): string {
  return er.metadata.labels?.[SCALE_SET_LABEL] ?? '(no scale set label)';
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** ARC before 0.12 (the 0.2–0.11 line) never cleans an EphemeralRunner it marked Failed. */
const ARC_FIRST_FIXED = '0.12.0';

function nodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function podRef(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

function erRef(er: EphemeralRunnerObject): string {
  return `${er.metadata.namespace}/${er.metadata.name}`;
}

/**
 * Merges the per-scale-set (or per-pod) results of one pod-template check into one check, the
 * subjects that share a text named together.
 */
function mergeTemplateResults(
  id: string,
  results: { subject: string; result: PodTemplateCheckResult }[],
  none: string,
): CheckResult {
  const findings = results.filter((r) => r.result.status === 'finding');
  const shown = findings.length > 0 ? findings : results;
  const first = shown[0];
  if (!first) return ok(id, none);
  const byText = new Map<string, string[]>();
  for (const r of shown) byText.set(r.result.why, [...(byText.get(r.result.why) ?? []), r.subject]);
  const why = [...byText.entries()]
    .map(([text, subjects]) => `${listed(subjects)}: ${text}`)
    .join(' ');
  return findings.length > 0 ? finding(id, why, first.result.what) : ok(id, why);
}

/** The checks over what was read: ARC, Failed ERs, pods on bad nodes, ERs without pods, templates. */
export function checkClusterSnapshot(
  cluster: string,
  snapshot: ClusterSnapshot,
  now: number,
): CheckResult[] {
  const prefix = `cluster.${cluster}`;
  return [
    checkArcVersion(prefix, snapshot.runners),
    checkFailedRunners(prefix, snapshot.runners),
    checkPodsOnUnreadyNodes(prefix, snapshot),
    checkRunnersWithoutPod(prefix, snapshot, now),
    ...checkPodTemplates(prefix, snapshot),
  ];
}

function checkArcVersion(prefix: string, runners: EphemeralRunnerObject[]): CheckResult {
  const versions = [
    ...new Set(
      runners.map((er) => er.metadata.labels?.[VERSION_LABEL]).filter((v) => v !== undefined),
    ),
  ].sort(compareVersions);
  const oldest = versions[0];
  if (!oldest)
    return failed(
      `${prefix}.arc-version`,
      `Cannot tell ARC's version: no EphemeralRunner carries the ${VERSION_LABEL} label ARC sets (there may be no runner right now).`,
      'Run the doctor again while a scale set has runners.',
    );
  if (compareVersions(oldest, ARC_FIRST_FIXED) < 0)
    return finding(
      `${prefix}.arc-version`,
      `ARC ${listed(versions)}: before ${ARC_FIRST_FIXED} ARC re-creates a failed runner pod with the same registration, and after 5 failures leaves the EphemeralRunner Failed for ever, still counted against maxRunners.`,
      'Upgrade gha-runner-scale-set-controller and the scale sets to the current ARC (0.15).',
    );
  return ok(
    `${prefix}.arc-version`,
    `ARC ${listed(versions)} (from the runners' ${VERSION_LABEL} label).`,
  );
}

function checkFailedRunners(prefix: string, runners: EphemeralRunnerObject[]): CheckResult {
  const failedErs = runners.filter((er) => er.status?.phase === 'Failed');
  return failedErs.length > 0
    ? finding(
        `${prefix}.failed-runners`,
        `${failedErs.length} EphemeralRunners are stuck Failed: ${listed(
          failedErs.map((er) => `${erRef(er)} (${er.status?.reason ?? 'no reason'})`),
        )}. ARC does not clean them, and each still counts against the scale set's maxRunners.`,
        'Find the cause in the reason (InvalidPod: an admission webhook refused the pod; TooManyPodFailures), fix it, then delete the Failed EphemeralRunners.',
      )
    : ok(`${prefix}.failed-runners`, 'No EphemeralRunner is stuck Failed.');
}

const nodesByName = (snapshot: ClusterSnapshot) =>
  new Map(snapshot.nodes.map((n) => [n.metadata?.name ?? '', n]));

function checkPodsOnUnreadyNodes(prefix: string, snapshot: ClusterSnapshot): CheckResult {
  const nodeByName = nodesByName(snapshot);
  const onBadNodes = snapshot.pods.flatMap((pod) => {
    const name = pod.spec?.nodeName;
    if (!name) return [];
    const node = nodeByName.get(name);
    if (!node) return [`${podRef(pod)} on ${name} (deleted)`];
    return nodeReady(node) ? [] : [`${podRef(pod)} on ${name} (NotReady)`];
  });
  return onBadNodes.length > 0
    ? finding(
        `${prefix}.pods-on-unready-nodes`,
        `${onBadNodes.length} runner pods are on NotReady or deleted nodes: ${listed(onBadNodes)}. Their jobs are lost or about to be, and the pods hold runner slots until they are cleaned.`,
        'runner-medic frees such slots and re-runs the jobs when the policy allows; check the nodes (kubectl describe node) and the freePoisonedSlot rule.',
      )
    : ok(`${prefix}.pods-on-unready-nodes`, 'No runner pod is on a NotReady or deleted node.');
}

function checkRunnersWithoutPod(
  prefix: string,
  snapshot: ClusterSnapshot,
  now: number,
): CheckResult {
  const podNames = new Set(snapshot.pods.map(podRef));
  const withoutPod = snapshot.runners.filter((er) => {
    const created = time(er.metadata.creationTimestamp);
    const phase = er.status?.phase;
    return (
      er.metadata.deletionTimestamp === undefined &&
      phase !== 'Failed' &&
      phase !== 'Succeeded' &&
      created !== undefined &&
      now - created > POD_EXPECTED_AFTER_MS &&
      !podNames.has(erRef(er))
    );
  });
  return withoutPod.length > 0
    ? finding(
        `${prefix}.runners-without-pod`,
        `${withoutPod.length} EphemeralRunners have had no pod for more than ${POD_EXPECTED_AFTER_MS / 60_000} minutes: ${listed(withoutPod.map(erRef))}. Each holds a registration and a slot of the scale set, and a job assigned to it waits.`,
        'Check the ARC controller’s logs for these runners; runner-medic’s freePoisonedSlot rule deletes them when the policy allows.',
      )
    : ok(`${prefix}.runners-without-pod`, 'Every EphemeralRunner has its pod.');
}

/** Pod templates, once per scale set (ERs embed their scale set's template). */
function checkPodTemplates(prefix: string, snapshot: ClusterSnapshot): CheckResult[] {
  const templateBySet = new Map<string, EphemeralRunnerObject>();
  for (const er of snapshot.runners)
    if (!templateBySet.has(scaleSetOf(er))) templateBySet.set(scaleSetOf(er), er);
  const perSet = [...templateBySet.entries()].flatMap(([set, er]) => {
    const template = runnerPodTemplateOf(er);
    if (!template) return [];
    const context = snapshot.kubernetesVersion
      ? { kubernetesVersion: snapshot.kubernetesVersion }
      : {};
    return checkRunnerPodTemplate(template, context).map((result) => ({
      subject: `scale set ${set}`,
      result,
    }));
  });
  // Karpenter protection, per running pod: only the pod's node says whether Karpenter manages it.
  const nodeByName = nodesByName(snapshot);
  const perPod = snapshot.pods.flatMap((pod) => {
    const template = runnerPodTemplateOf(pod);
    const node = nodeByName.get(pod.spec?.nodeName ?? '');
    if (!template || !node) return [];
    const labels = node.metadata?.labels ?? {};
    const result = checkRunnerPodTemplate(template, { nodeLabels: labels }).find(
      (r) => r.id === 'karpenter-do-not-disrupt',
    );
    return result ? [{ subject: `pod ${podRef(pod)}`, result }] : [];
  });
  return POD_TEMPLATE_CHECK_IDS.map((checkId) =>
    checkId === 'karpenter-do-not-disrupt'
      ? mergeTemplateResults(`${prefix}.${checkId}`, perPod, 'No runner pod is running now.')
      : mergeTemplateResults(
          `${prefix}.${checkId}`,
          perSet.filter((r) => r.result.id === (checkId as PodTemplateCheckId)),
          'No EphemeralRunner to read a scale set’s pod template from.',
        ),
  );
}

/** The scale sets a snapshot shows (lower-cased, as GitHub matches runs-on labels). */
export function scaleSetsOf(snapshot: ClusterSnapshot): string[] {
  return [
    ...new Set(
      snapshot.runners
        .map((er) => er.metadata.labels?.[SCALE_SET_LABEL])
        .filter((s): s is string => s !== undefined),
    ),
  ];
}
