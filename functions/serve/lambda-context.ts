import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** The Lambda context a handler gets when it runs outside Lambda (local server, sandbox, tests). */
export function localLambdaContext(functionName: string, remainingMs = 10_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
