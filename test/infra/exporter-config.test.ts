/**
 * The shipped kubernetes-event-exporter config (infra/kubernetes/event-exporter.yaml), expanded
 * with its Deployment's env as the exporter does, routed with Go's semantics
 * (sim/kube/export/exporter-route.ts): every reason the classifier acts on reaches runner-medic
 * exactly once; noise, other namespaces and non-runner pods do not.
 */
import { parseExporterConfig, routeEvent } from '../../sim/kube/export/exporter-route.js';
import {
  actionableEvents,
  exportedEvent,
  NOISE_REASONS,
  NODE_REASONS,
  NTH_REASONS,
  POD_REASONS,
  readManifests,
} from './infra-fixtures.js';
import { eventPatterns } from './infra-fixtures.js';

const manifests = readManifests('infra/kubernetes/event-exporter.yaml');
const byKind = (kind: string) => {
  const found = manifests.find((m) => m['kind'] === kind);
  if (!found) throw new Error(`event-exporter.yaml has no ${kind}`);
  return found as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const configText = byKind('ConfigMap')['data']['config.yaml'] as string;
const env = Object.fromEntries(
  (
    byKind('Deployment')['spec']['template']['spec']['containers'][0]['env'] as {
      name: string;
      value: string;
    }[]
  ).map((e) => [e.name, e.value]),
);
const config = parseExporterConfig(configText, env);
const namespace = env['RUNNER_NAMESPACES'] as string;

describe('the shipped exporter route', () => {
  it('parses with no key the Go exporter would ignore and no pattern Go would refuse', () => {
    expect(config.ignoredKeys).toEqual([]);
    expect(config.invalidPatterns).toEqual([]);
    expect(config.raw['clusterName']).toBe(env['CLUSTER_NAME']);
  });

  it('sends every event the classifier acts on to runner-medic, once', () => {
    const events = actionableEvents(namespace);
    expect(events.length).toBeGreaterThanOrEqual(20);
    for (const detail of events)
      expect([detail['reason'], routeEvent(config.route, detail)]).toEqual([
        detail['reason'],
        ['runner-medic'],
      ]);
  });

  it.each(NOISE_REASONS)('drops %s, for runner pods and nodes alike', (reason) => {
    expect(
      routeEvent(config.route, exportedEvent({ kind: 'Pod', reason, namespace, type: 'Normal' })),
    ).toEqual([]);
    expect(
      routeEvent(config.route, exportedEvent({ kind: 'Node', reason, type: 'Normal' })),
    ).toEqual([]);
  });

  it('drops pod events outside the runner namespaces and pods without the runner label', () => {
    expect(
      routeEvent(
        config.route,
        exportedEvent({ kind: 'Pod', reason: 'Evicted', namespace: 'kube-system' }),
      ),
    ).toEqual([]);
    expect(
      routeEvent(
        config.route,
        exportedEvent({ kind: 'Pod', reason: 'Evicted', namespace: `${namespace}-2` }),
      ),
    ).toEqual([]);
    expect(
      routeEvent(
        config.route,
        exportedEvent({ kind: 'Pod', reason: 'Evicted', namespace, labels: { app: 'web' } }),
      ),
    ).toEqual([]);
    // A pod already gone when the exporter looked it up has no labels: the sweep finds that loss.
    expect(
      routeEvent(
        config.route,
        exportedEvent({ kind: 'Pod', reason: 'Evicted', namespace, labels: {} }),
      ),
    ).toEqual([]);
  });

  it('is anchored: look-alike reasons do not pass', () => {
    for (const reason of ['NotEvicted', 'EvictedAgain', 'Preempt', 'PreemptedX', 'XNodeNotReady'])
      expect([
        reason,
        routeEvent(config.route, exportedEvent({ kind: 'Pod', reason, namespace })),
      ]).toEqual([reason, []]);
  });

  it('forwards exactly the reasons the EventBridge rule accepts', () => {
    const pattern = eventPatterns({ runnerNamespaces: namespace })['kubernetesEvents'] as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    const [pods, nodes] = pattern.detail.$or as { reason: string[] }[];
    expect(new Set(pods?.reason)).toEqual(new Set(POD_REASONS));
    expect(new Set(nodes?.reason)).toEqual(new Set([...NODE_REASONS, ...NTH_REASONS]));
  });
});
