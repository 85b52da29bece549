/**
 * What reaches runner-medic's EventBridge bus: kubernetes-event-exporter's PutEvents entries
 * (at most once) and AWS's own EC2 events, each as the envelope an EventBridge target receives.
 */

/** The envelope EventBridge delivers to a rule target (Lambda `event`). */
export interface EventBridgeEvent<D = unknown> {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: D;
}

/** A PutEvents request entry, as kubernetes-event-exporter's EventBridge sink sends it. */
export interface PutEventsEntry {
  Source: string;
  DetailType: string;
  /** JSON text. */
  Detail: string;
  EventBusName: string;
  Time: Date;
}

export interface BusDelivery {
  /** Who put it on the bus. */
  via: 'kubernetes-event-exporter' | 'aws.ec2';
  /** Simulated delivery time (ms). */
  at: number;
  event: EventBridgeEvent;
  /** The exporter's PutEvents entry (absent for AWS service events). */
  entry?: PutEventsEntry;
}

export interface DroppedEntry {
  at: number;
  entry: PutEventsEntry;
  reason: string;
}

export type BusSubscriber = (delivery: BusDelivery) => void;

export class EventBus {
  readonly deliveries: BusDelivery[] = [];
  readonly dropped: DroppedEntry[] = [];
  private readonly subscribers = new Set<BusSubscriber>();

  subscribe(subscriber: BusSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(delivery: BusDelivery): void {
    this.deliveries.push(delivery);
    for (const s of [...this.subscribers]) s(delivery);
  }

  drop(entry: DroppedEntry): void {
    this.dropped.push(entry);
  }
}

/** EventBridge's `time`: ISO 8601 at second precision. */
export function busTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
