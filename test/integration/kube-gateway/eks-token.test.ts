import {
  EKS_TOKEN_LIFETIME_MS,
  EksTokenSource,
  presignEksToken,
  type AwsCredentials,
} from '../../../functions/adapters/kubernetes/eks-token.js';
import { decodeEksToken, expectedSignature } from './sigv4-check.js';

const T0 = Date.parse('2026-01-05T09:00:00.000Z');
const CREDS: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

function decode(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  expect(token.slice('k8s-aws-v1.'.length)).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
  return decodeEksToken(token);
}

describe('EKS token (presigned STS GetCallerIdentity)', () => {
  it('presigns GetCallerIdentity for the regional STS host, signing x-k8s-aws-id, for 60 s', async () => {
    const { token, expiresAt } = await presignEksToken({
      clusterName: 'prod-runners',
      region: 'eu-west-1',
      credentials: CREDS,
      now: T0,
    });
    const url = decode(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Date')).toBe('20260105T090000Z');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20260105/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['host', 'x-k8s-aws-id']);
    expect(q.has('x-k8s-aws-id')).toBe(false); // a header, not hoisted into the query
    expect(q.has('X-Amz-Security-Token')).toBe(false);
    expect(q.get('X-Amz-Signature')).toBe(
      expectedSignature(
        url,
        { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'prod-runners' },
        CREDS.secretAccessKey,
      ),
    );
    // The same signature does not verify for another cluster name.
    expect(q.get('X-Amz-Signature')).not.toBe(
      expectedSignature(
        url,
        { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'other' },
        CREDS.secretAccessKey,
      ),
    );
    expect(expiresAt).toBe(T0 + 15 * 60_000);
    expect(token.length).toBeLessThanOrEqual(4096);
  });

  it('carries the session token, uses the China STS host, and ends with the credentials', async () => {
    const expiration = new Date(T0 + 5 * 60_000);
    const { token, expiresAt } = await presignEksToken({
      clusterName: 'c',
      region: 'cn-north-1',
      credentials: { ...CREDS, sessionToken: 'session/token+1', expiration },
      now: T0,
    });
    const url = decode(token);
    expect(url.host).toBe('sts.cn-north-1.amazonaws.com.cn');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('session/token+1');
    expect(expiresAt).toBe(expiration.getTime());
  });

  it('reuses the cached token until 14 minutes, then presigns a new one', async () => {
    let now = T0;
    let credentialCalls = 0;
    const source = new EksTokenSource({
      clusterName: 'prod-runners',
      region: 'us-east-1',
      clock: { now: () => now },
      credentials: () => {
        credentialCalls++;
        return Promise.resolve(CREDS);
      },
    });
    const first = await source.token();
    expect(decode(first.token).searchParams.get('X-Amz-Date')).toBe('20260105T090000Z');

    now = T0 + 14 * 60_000 - 1;
    expect(await source.token()).toBe(first);
    expect(credentialCalls).toBe(1);

    now = T0 + 14 * 60_000;
    const second = await source.token();
    expect(second.token).not.toBe(first.token);
    expect(decode(second.token).searchParams.get('X-Amz-Date')).toBe('20260105T091400Z');
    expect(second.expiresAt).toBe(now + EKS_TOKEN_LIFETIME_MS);
    expect(credentialCalls).toBe(2);

    now += 60_000;
    expect(await source.token()).toBe(second);
    source.invalidate();
    expect((await source.token()).token).not.toBe(second.token);
    expect(credentialCalls).toBe(3);
  });

  it('does not cache a failure to get credentials', async () => {
    let fail = true;
    const source = new EksTokenSource({
      clusterName: 'c',
      region: 'us-east-1',
      clock: { now: () => T0 },
      credentials: () => (fail ? Promise.reject(new Error('no creds')) : Promise.resolve(CREDS)),
    });
    await expect(source.token()).rejects.toThrow('no creds');
    fail = false;
    expect((await source.token()).token).toMatch(/^k8s-aws-v1\./);
  });
});
