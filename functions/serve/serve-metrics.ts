/**
 * The engine's and the webhook's metrics on Prometheus (prom-client), under the names the Lambda
 * deployment gives them in CloudWatch (EngineRun, SweepRun, WebhookDelivery, Remediation,
 * LossToAction, …; the namespace RunnerMedic is not part of the name), each dimension a label.
 * A metric's label names are fixed by its first use; a later use without one of them gets ''.
 * serve adds its own: RunnerMedicLeader, RunnerMedicInformersSynced, KubeApiUnreachable.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineMetrics } from '../ports/engine-reporting.js';

type Dimensions = Record<string, string>;

export class ServeMetrics {
  readonly registry = new Registry();
  private readonly counters = new Map<string, Counter>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly gauges = new Map<string, Gauge>();

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** The engine's metrics port. */
  engine(): EngineMetrics {
    return {
      count: (name, dimensions) => this.count(name, dimensions),
      milliseconds: (name, dimensions, value) => this.milliseconds(name, dimensions, value),
      percent: (name, dimensions, value) => this.gauge(name, dimensions, value),
    };
  }

  count(name: string, dimensions: Dimensions = {}, by = 1): void {
    let metric = this.counters.get(name);
    if (!metric) {
      metric = new Counter({
        name,
        help: `${name} (count; as the CloudWatch metric of that name)`,
        labelNames: Object.keys(dimensions),
        registers: [this.registry],
      });
      this.counters.set(name, metric);
    }
    metric.inc(labelsFor(metric, dimensions), by);
  }

  milliseconds(name: string, dimensions: Dimensions, value: number): void {
    let metric = this.histograms.get(name);
    if (!metric) {
      metric = new Histogram({
        name,
        help: `${name} (milliseconds; as the CloudWatch metric of that name)`,
        labelNames: Object.keys(dimensions),
        buckets: [1_000, 5_000, 15_000, 30_000, 60_000, 120_000, 300_000, 900_000],
        registers: [this.registry],
      });
      this.histograms.set(name, metric);
    }
    metric.observe(labelsFor(metric, dimensions), value);
  }

  gauge(name: string, dimensions: Dimensions, value: number): void {
    let metric = this.gauges.get(name);
    if (!metric) {
      metric = new Gauge({
        name,
        help: `${name} (as the CloudWatch metric of that name)`,
        labelNames: Object.keys(dimensions),
        registers: [this.registry],
      });
      this.gauges.set(name, metric);
    }
    metric.set(labelsFor(metric, dimensions), value);
  }

  /** The exposition text for GET /metrics. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The dimensions as the metric's labels: missing ones '', unknown ones dropped. */
function labelsFor(metric: Counter | Histogram | Gauge, dimensions: Dimensions): Dimensions {
  const names = (metric as unknown as { labelNames: string[] }).labelNames;
  return Object.fromEntries(names.map((n) => [n, dimensions[n] ?? '']));
}
