import type { Ec2Event, KubeEvent } from '../model/cluster-facts.js';
import { parseCloudWatchKubeEvents } from './parse-cloudwatch-logs.js';
import { parseEc2Event } from './parse-ec2-event.js';
import { parseExportedKubeEvent, type KubeEventParseOptions } from './parse-kube-event.js';
import { fail, ok, type Result } from '../model/result.js';

export type ClusterInput =
  | { kind: 'kube-events'; events: KubeEvent[]; rejected: { id: string | null; reason: string }[] }
  | { kind: 'ec2'; event: Ec2Event };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * One entry point for the remediate function's cluster-side inputs: an EventBridge event from
 * kubernetes-event-exporter or from EC2, or already-decoded CloudWatch Logs subscription data.
 */
export function parseClusterInput(
  raw: unknown,
  options: KubeEventParseOptions = {},
): Result<ClusterInput> {
  if (!isObject(raw)) return fail('input is not an object');
  if ('awslogs' in raw) return fail('CloudWatch Logs data must be decoded (base64, gunzip) first');
  if ('logEvents' in raw) {
    const r = parseCloudWatchKubeEvents(raw, options);
    return r.ok
      ? ok({ kind: 'kube-events', events: r.value.events, rejected: r.value.rejected })
      : r;
  }
  if (raw['source'] === 'aws.ec2') {
    const r = parseEc2Event(raw);
    return r.ok ? ok({ kind: 'ec2', event: r.value }) : r;
  }
  const r = parseExportedKubeEvent(raw, options);
  return r.ok ? ok({ kind: 'kube-events', events: [r.value], rejected: [] }) : r;
}
