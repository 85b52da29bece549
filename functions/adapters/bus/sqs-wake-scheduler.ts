import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../ports/clock.js';
import { WAKE_SOURCE, type WakeScheduler } from '../../ports/wake-scheduler.js';

/** SQS's longest message delay; a later wake-up is left to the sweep. */
const MAX_DELAY_SECONDS = 900;

/**
 * Wakes the remediate function at a time, to the second, with a delayed SQS message: grace
 * periods and retries end when they end rather than at the next sweep.
 */
export class SqsWakeScheduler implements WakeScheduler {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly clock: Clock,
  ) {}

  async wakeAt(at: number): Promise<void> {
    const delaySeconds = Math.max(0, Math.ceil((at - this.clock.now()) / 1000));
    if (delaySeconds > MAX_DELAY_SECONDS) return;
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        DelaySeconds: delaySeconds,
        MessageBody: JSON.stringify({ source: WAKE_SOURCE, 'detail-type': 'Wake', detail: { at } }),
      }),
    );
  }
}
