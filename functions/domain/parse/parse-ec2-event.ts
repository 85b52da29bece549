import * as z from 'zod';
import type { Ec2Event } from '../model/cluster-facts.js';
import { timestamp } from '../model/kube-schemas.js';
import { problemText } from '../model/zod-problems.js';
import { fail, ok, type Result } from '../model/result.js';

const SPOT_WARNING_DETAIL_TYPE = 'EC2 Spot Instance Interruption Warning';
const STATE_CHANGE_DETAIL_TYPE = 'EC2 Instance State-change Notification';

// Built on first parse (z.lazy): only remediate's EC2 inputs need them.
const envelope = z.lazy(() =>
  z.object({
    source: z.literal('aws.ec2'),
    'detail-type': z.string().max(128),
    account: z.string().max(32).nullish(),
    region: z.string().max(32).nullish(),
    time: timestamp,
    detail: z.unknown(),
  }),
);

/** EC2 instance ids are `i-` and 8 or 17 hex digits. */
const instanceId = () => z.string().regex(/^i-[0-9a-f]{8,17}$/);
const spotDetail = z.lazy(() =>
  z.object({ 'instance-id': instanceId(), 'instance-action': z.string().max(64) }),
);
const stateDetail = z.lazy(() =>
  z.object({ 'instance-id': instanceId(), state: z.string().max(64) }),
);

/** Parse an EC2 spot interruption warning or instance state-change event in AWS's envelope. */
export function parseEc2Event(raw: unknown): Result<Ec2Event> {
  const env = envelope.safeParse(raw);
  if (!env.success) return fail(`not an EC2 event: ${problemText(env.error)}`);
  const { account, region, time, detail } = env.data;
  const base = { region: region ?? null, account: account ?? null, at: time };
  if (env.data['detail-type'] === SPOT_WARNING_DETAIL_TYPE) {
    const d = spotDetail.safeParse(detail);
    if (!d.success) return fail(`bad spot warning detail: ${problemText(d.error)}`);
    return ok({
      kind: 'ec2-spot-interruption-warning',
      instanceId: d.data['instance-id'],
      instanceAction: d.data['instance-action'],
      ...base,
    });
  }
  if (env.data['detail-type'] === STATE_CHANGE_DETAIL_TYPE) {
    const d = stateDetail.safeParse(detail);
    if (!d.success) return fail(`bad state-change detail: ${problemText(d.error)}`);
    return ok({
      kind: 'ec2-instance-state-change',
      instanceId: d.data['instance-id'],
      state: d.data.state,
      ...base,
    });
  }
  return fail(`unsupported EC2 detail-type: ${env.data['detail-type']}`);
}
