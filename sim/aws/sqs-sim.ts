import { createHash } from 'node:crypto';
import { AwsJsonEndpoint } from './aws-json-endpoint.js';

export interface SentMessage {
  QueueUrl: string;
  MessageBody: string;
  DelaySeconds?: number;
}

/** A loopback SQS endpoint for SendMessage in the JSON protocol the AWS SDK uses; records what it gets. */
export class SqsSim {
  readonly messages: SentMessage[] = [];
  private readonly endpoint = new AwsJsonEndpoint(
    'application/x-amz-json-1.0',
    (target, request) => {
      if (target !== 'AmazonSQS.SendMessage') {
        return {
          status: 400,
          body: { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: 'only SendMessage' },
        };
      }
      const message = request as SentMessage;
      this.messages.push(message);
      return {
        status: 200,
        body: {
          MessageId: `sim-${this.messages.length}`,
          MD5OfMessageBody: createHash('md5').update(message.MessageBody).digest('hex'),
        },
      };
    },
  );

  start(): Promise<string> {
    return this.endpoint.start();
  }

  stop(): Promise<void> {
    return this.endpoint.stop();
  }
}
