/**
 * Shared by the test/infra tests: the reasons the classifier acts on (read from its source and
 * confirmed by running it), exported-event builders, and a resolver for the few CloudFormation
 * functions the event patterns use.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { classifyEvent } from '../../functions/domain/classify/classify-event.js';
import type { KubeEvent } from '../../functions/domain/model/cluster-facts.js';

const NTH_COMPONENT = 'aws-node-termination-handler';

const source = readFileSync('functions/domain/classify/classify-event.ts', 'utf8');

function mapKeys(name: string): string[] {
  const body = new RegExp(`const ${name}[^{]*\\{([^}]*)\\}`).exec(source)?.[1];
  if (body === undefined) throw new Error(`classify-event.ts has no ${name} map`);
  return [...body.matchAll(/^\s*(\w+):/gm)].map((m) => m[1] as string);
}

function podCaseReasons(): string[] {
  const body = /function podCause[\s\S]*?\n}\n/.exec(source)?.[0];
  if (body === undefined) throw new Error('classify-event.ts has no podCause');
  return [...body.matchAll(/case '(\w+)':/g)].map((m) => m[1] as string);
}

/** Pod event reasons the classifier turns into a loss or a warning. */
export const POD_REASONS = [...new Set([...podCaseReasons(), ...mapKeys('POD_WARNINGS')])];
/** Node event reasons it turns into a node signal (kubelet, Karpenter, controllers). */
export const NODE_REASONS = mapKeys('NODE_WARNINGS');
/** Node event reasons from aws-node-termination-handler. */
export const NTH_REASONS = mapKeys('NTH_WARNINGS');

/** The classifier's emitter lists (`const KUBELET = ['kubelet']`, …) by name. */
const EMITTER_LISTS = Object.fromEntries(
  [...source.matchAll(/^const (\w+) = \[([^\]]*)\];/gm)].map((m) => [
    m[1] as string,
    [...(m[2] as string).matchAll(/'([^']+)'/g)].map((q) => q[1] as string),
  ]),
);

/** The components the classifier trusts to emit a reason (its POD_EMITTERS / NODE_EMITTERS). */
function emitters(map: 'POD_EMITTERS' | 'NODE_EMITTERS', reason: string): string[] {
  const body = new RegExp(`const ${map}[^{]*\\{([^}]*)\\}`).exec(source)?.[1] ?? '';
  const line = new RegExp(`^\\s*${reason}: (.+),$`, 'm').exec(body)?.[1] ?? '';
  return [...line.matchAll(/[A-Z_]{3,}/g)].flatMap((m) => EMITTER_LISTS[m[0]] ?? []);
}

/** The message each reason needs to be acted on (the classifier reads a few messages). */
const MESSAGES: Record<string, string> = {
  DisruptionTerminating: 'Disrupting Node: Underutilized/Delete',
  TaintManagerEviction: 'Marking for deletion Pod github-runners/runner-1',
  Evicted: 'The node was low on resource: memory. ',
};

const RUNNER_LABELS = {
  'actions-ephemeral-runner': 'True',
  'app.kubernetes.io/component': 'runner',
};

/** The exporter's EnhancedEvent JSON (the EventBridge `detail`) for a pod or node event. */
export function exportedEvent(options: {
  kind: 'Pod' | 'Node';
  reason: string;
  namespace?: string;
  labels?: Record<string, string>;
  type?: string;
  component?: string;
}): Record<string, unknown> {
  const eventNamespace = options.kind === 'Pod' ? (options.namespace ?? 'arc-runners') : 'default';
  const trusted = emitters(
    options.kind === 'Pod' ? 'POD_EMITTERS' : 'NODE_EMITTERS',
    options.reason,
  );
  return {
    metadata: { name: 'x.17a1b2c3d4e5f6a7', namespace: eventNamespace, uid: 'e-1' },
    reason: options.reason,
    message: MESSAGES[options.reason] ?? `${options.reason} happened`,
    source: { component: options.component ?? trusted[0] ?? 'kubelet', host: 'node-a' },
    count: 1,
    type: options.type ?? 'Warning',
    clusterName: 'prod-eu',
    involvedObject: {
      kind: options.kind,
      ...(options.kind === 'Pod' ? { namespace: eventNamespace } : {}),
      name: options.kind === 'Pod' ? 'runner-1' : 'node-a',
      uid: 'u-1',
      apiVersion: 'v1',
      labels: options.labels ?? (options.kind === 'Pod' ? RUNNER_LABELS : {}),
      deleted: false,
    },
  };
}

/** The EventBridge envelope around an exported event. */
export function k8sBusEvent(detail: Record<string, unknown>): Record<string, unknown> {
  return {
    version: '0',
    id: 'id-1',
    'detail-type': 'k8s-event',
    source: 'k8s.events',
    account: '123456789012',
    time: '2026-03-01T12:00:00Z',
    region: 'eu-west-1',
    resources: [],
    detail,
  };
}

/** The classifier's verdict on an exported event: anything but `ignored` means it acts. */
export function classifierActsOn(detail: Record<string, unknown>): boolean {
  const io = detail['involvedObject'] as Record<string, unknown>;
  const src = detail['source'] as Record<string, string>;
  const ev: KubeEvent = {
    cluster: 'prod-eu',
    name: 'x',
    namespace: (detail['metadata'] as Record<string, string>)['namespace'] ?? null,
    uid: 'e-1',
    reason: detail['reason'] as string,
    message: detail['message'] as string,
    type: detail['type'] as string,
    sourceComponent: src['component'] ?? null,
    sourceHost: src['host'] ?? null,
    reportingComponent: null,
    annotations: {},
    involvedObject: {
      kind: io['kind'] as string,
      namespace: (io['namespace'] as string | undefined) ?? null,
      name: io['name'] as string,
      uid: 'u-1',
      apiVersion: 'v1',
      fieldPath: null,
      labels: io['labels'] as Record<string, string>,
      annotations: {},
      ownerReferences: [],
      deleted: false,
    },
    count: 1,
    at: 0,
  };
  return classifyEvent(ev).kind !== 'ignored';
}

/** Every exported event the classifier acts on, one per reason. */
export function actionableEvents(namespace: string): Record<string, unknown>[] {
  return [
    ...POD_REASONS.map((reason) => exportedEvent({ kind: 'Pod', reason, namespace })),
    ...NODE_REASONS.map((reason) => exportedEvent({ kind: 'Node', reason })),
    ...NTH_REASONS.map((reason) =>
      exportedEvent({ kind: 'Node', reason, component: NTH_COMPONENT }),
    ),
  ];
}

/** Common noise from a runner pod's life: none of it is a loss. */
export const NOISE_REASONS = ['Killing', 'Scheduled', 'Pulled', 'Started', 'Created'];

export const readJson = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/** The YAML documents of a manifest file. */
export function readManifests(path: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
}

/**
 * infra/aws/event-patterns.yml with serverless params substituted and Fn::Split resolved, as
 * CloudFormation hands the patterns to EventBridge.
 */
export function eventPatterns(params: Record<string, string>): Record<string, unknown> {
  let text = readFileSync('infra/aws/event-patterns.yml', 'utf8');
  for (const [k, v] of Object.entries(params)) text = text.replaceAll(`\${param:${k}}`, v);
  return resolveIntrinsics(parseYaml(text)) as Record<string, unknown>;
}

/** Fn::Split over literals (what the patterns use); other intrinsics are left as they are. */
function resolveIntrinsics(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolveIntrinsics);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1 && entries[0]?.[0] === 'Fn::Split') {
    const [sep, text] = entries[0][1] as [string, unknown];
    if (typeof text === 'string') return text.split(sep);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v)]));
}
