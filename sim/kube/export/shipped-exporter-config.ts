/**
 * The exporter config runner-medic ships (infra/kubernetes/event-exporter.yaml): the ConfigMap's
 * `config.yaml`, expanded with the Deployment's env as the exporter's main.go does
 * (`os.ExpandEnv`), for one cluster: `CLUSTER_NAME` is the cluster's name and `RUNNER_NAMESPACES`
 * its runner namespaces joined by `|`, as docs/deploy.md tells an operator to set them.
 */
import { readFileSync } from 'node:fs';
import { parseManifest } from '../manifest.js';
import type { ExporterRouting } from './event-exporter.js';
import { parseExporterConfig } from './exporter-route.js';

const SHIPPED_EXPORTER_MANIFEST = 'infra/kubernetes/event-exporter.yaml';

/** pkg/exporter/config.go: `maxEventAgeSeconds` (and the old `throttlePeriod`) default to 5. */
const DEFAULT_MAX_EVENT_AGE_SECONDS = 5;
/** pkg/exporter/config.go `DefaultCacheSize`. */
const DEFAULT_CACHE_SIZE = 1024;

export function shippedExporterRouting(options: {
  clusterName: string;
  runnerNamespaces: string[];
  file?: string;
}): ExporterRouting {
  const file = options.file ?? SHIPPED_EXPORTER_MANIFEST;
  const docs = parseManifest(readFileSync(file, 'utf8'), file) as unknown as Record<
    string,
    unknown
  >[];
  const configMap = docs.find((d) => d['kind'] === 'ConfigMap') as
    { data?: Record<string, string> } | undefined;
  const text = configMap?.data?.['config.yaml'];
  if (text === undefined) throw new Error(`${file}: no ConfigMap with data.config.yaml`);
  const deployment = docs.find((d) => d['kind'] === 'Deployment') as
    | {
        spec?: {
          template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
        };
      }
    | undefined;
  const env: Record<string, string> = {};
  for (const e of deployment?.spec?.template?.spec?.containers?.[0]?.env ?? [])
    if (e.value !== undefined) env[e.name] = e.value;
  env['CLUSTER_NAME'] = options.clusterName;
  env['RUNNER_NAMESPACES'] = options.runnerNamespaces.join('|');
  return routingFromConfig(parseExporterConfig(text, env), file);
}

function routingFromConfig(
  config: ReturnType<typeof parseExporterConfig>,
  file: string,
): ExporterRouting {
  const raw = config.raw;
  const receivers: ExporterRouting['receivers'] = {};
  for (const receiver of Array.isArray(raw['receivers']) ? raw['receivers'] : []) {
    const r = receiver as { name?: unknown; eventbridge?: Record<string, unknown> };
    if (typeof r.name !== 'string' || !r.eventbridge) continue;
    receivers[r.name] = {
      source: String(r.eventbridge['source'] ?? ''),
      detailType: String(r.eventbridge['detailType'] ?? ''),
      eventBusName: String(r.eventbridge['eventBusName'] ?? ''),
    };
  }
  if (Object.keys(receivers).length === 0) throw new Error(`${file}: no eventbridge receiver`);
  const age = Number(raw['maxEventAgeSeconds'] ?? raw['throttlePeriod'] ?? 0);
  const cacheSize = Number(raw['cacheSize'] ?? 0);
  return {
    route: config.route,
    maxEventAgeSeconds: age > 0 ? age : DEFAULT_MAX_EVENT_AGE_SECONDS,
    cacheSize: cacheSize > 0 ? cacheSize : DEFAULT_CACHE_SIZE,
    receivers,
    ...(typeof raw['clusterName'] === 'string' ? { clusterName: raw['clusterName'] } : {}),
  };
}
