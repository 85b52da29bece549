/**
 * EC2 instances behind the nodes: launch, spot interruption (warning 120 s ahead), termination
 * (`shutting-down` then `terminated`), each published in AWS's own EventBridge envelope.
 */
import { busTime, type EventBus } from '../export/event-bus.js';
import { hexId, uuid } from '../ids.js';
import type { ModelContext } from './model-context.js';

export type InstanceState = 'pending' | 'running' | 'shutting-down' | 'terminated';

export interface Instance {
  id: string;
  zone: string;
  instanceType: string;
  capacityType: 'spot' | 'on-demand';
  state: InstanceState;
  nodeName?: string;
  /** A spot interruption warning was sent for it. */
  interruptedAt?: number;
}

export interface Ec2Hooks {
  shuttingDown(instance: Instance): void;
  terminated(instance: Instance): void;
}

export class Ec2 {
  readonly instances = new Map<string, Instance>();
  hooks: Ec2Hooks | undefined;

  constructor(
    private readonly ctx: ModelContext,
    private readonly bus: EventBus,
    private readonly aws: { region: string; account: string },
  ) {}

  providerId(instance: Instance): string {
    return `aws:///${instance.zone}/${instance.id}`;
  }

  arn(instance: Instance): string {
    return `arn:aws:ec2:${this.aws.region}:${this.aws.account}:instance/${instance.id}`;
  }

  launch(options: {
    zone: string;
    instanceType: string;
    capacityType: 'spot' | 'on-demand';
    id?: string;
  }): Instance {
    const id = options.id ?? `i-0${hexId(this.ctx.rng, 16)}`;
    if (this.instances.has(id)) throw new Error(`instance ${id} already exists`);
    const instance: Instance = {
      id,
      zone: options.zone,
      instanceType: options.instanceType,
      capacityType: options.capacityType,
      state: 'pending',
    };
    this.instances.set(id, instance);
    this.stateChange(instance, 'pending');
    this.stateChange(instance, 'running');
    return instance;
  }

  byNode(nodeName: string): Instance | undefined {
    for (const i of this.instances.values()) if (i.nodeName === nodeName) return i;
    return undefined;
  }

  get(id: string): Instance {
    const i = this.instances.get(id);
    if (!i) throw new Error(`unknown instance ${id}`);
    return i;
  }

  /** Spot interruption: the warning now, the instance reclaimed `spotWarningMs` (120 s) later. */
  interruptSpot(instanceId: string): void {
    const instance = this.get(instanceId);
    if (instance.state !== 'running' || instance.interruptedAt !== undefined) return;
    instance.interruptedAt = this.ctx.clock.now();
    this.publish('EC2 Spot Instance Interruption Warning', instance, {
      'instance-id': instance.id,
      'instance-action': 'terminate',
    });
    this.ctx.log('ec2', 'Spot instance interruption warning', {
      instance: instance.id,
      node: instance.nodeName,
    });
    this.ctx.clock.after(this.ctx.timings.spotWarningMs, `spot reclaim ${instance.id}`, () =>
      this.terminate(instance.id),
    );
  }

  terminate(instanceId: string): void {
    const instance = this.get(instanceId);
    if (instance.state === 'shutting-down' || instance.state === 'terminated') return;
    this.stateChange(instance, 'shutting-down');
    this.hooks?.shuttingDown(instance);
    this.ctx.clock.after(this.ctx.timings.instanceShutdownMs, `terminated ${instance.id}`, () => {
      this.stateChange(instance, 'terminated');
      this.hooks?.terminated(instance);
    });
  }

  private stateChange(instance: Instance, state: InstanceState): void {
    instance.state = state;
    this.publish('EC2 Instance State-change Notification', instance, {
      'instance-id': instance.id,
      state,
    });
  }

  private publish(detailType: string, instance: Instance, detail: Record<string, string>): void {
    const now = this.ctx.clock.now();
    this.bus.publish({
      via: 'aws.ec2',
      at: now,
      event: {
        version: '0',
        id: uuid(this.ctx.rng),
        'detail-type': detailType,
        source: 'aws.ec2',
        account: this.aws.account,
        time: busTime(now),
        region: this.aws.region,
        resources: [this.arn(instance)],
        detail,
      },
    });
  }
}
