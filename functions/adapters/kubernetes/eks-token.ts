import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Clock } from '../../ports/clock.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Resolves the current AWS credentials (for example `fromNodeProviderChain()`). */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export interface EksToken {
  token: string;
  /** Epoch ms after which EKS refuses the token. */
  expiresAt: number;
}

/** EKS accepts a presigned GetCallerIdentity for 15 minutes after its X-Amz-Date. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
const TOKEN_PREFIX = 'k8s-aws-v1.';

function stsHostname(region: string): string {
  return region.startsWith('cn-')
    ? `sts.${region}.amazonaws.com.cn`
    : `sts.${region}.amazonaws.com`;
}

export interface PresignEksTokenInput {
  /** The EKS cluster name (not the runner-medic cluster key). */
  clusterName: string;
  region: string;
  credentials: AwsCredentials;
  /** Epoch ms used as the signing time. */
  now: number;
}

/**
 * An EKS bearer token: a presigned STS GetCallerIdentity URL that signs the `x-k8s-aws-id`
 * header (the cluster name), as aws-iam-authenticator checks it.
 */
export async function presignEksToken(input: PresignEksTokenInput): Promise<EksToken> {
  const hostname = stsHostname(input.region);
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: 'sts',
    sha256: Sha256,
  });
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host: hostname, 'x-k8s-aws-id': input.clusterName },
  });
  const signed = await signer.presign(request, {
    expiresIn: 60,
    signingDate: new Date(input.now),
  });
  const url = `https://${hostname}/?${queryString(signed.query ?? {})}`;
  const credentialEnd = input.credentials.expiration?.getTime() ?? Infinity;
  return {
    token: TOKEN_PREFIX + Buffer.from(url).toString('base64url'),
    expiresAt: Math.min(input.now + EKS_TOKEN_LIFETIME_MS, credentialEnd),
  };
}

function queryString(query: Record<string, string | string[] | null | undefined>): string {
  return Object.keys(query)
    .sort()
    .flatMap((k) => {
      const v = query[k];
      const values = v === null || v === undefined ? [] : Array.isArray(v) ? v : [v];
      return values.map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(x)}`);
    })
    .join('&');
}

export interface EksTokenSourceOptions {
  clusterName: string;
  region: string;
  credentials: AwsCredentialsProvider;
  clock: Clock;
  /** Renew this long before expiry (default 1 min, so a token is used for at most 14 min). */
  renewBeforeMs?: number;
}

/** Hands out a cached EKS token, presigning a new one when the cached one is about to expire. */
export class EksTokenSource {
  private cached: Promise<EksToken> | undefined;
  private readonly renewBeforeMs: number;

  constructor(private readonly options: EksTokenSourceOptions) {
    this.renewBeforeMs = options.renewBeforeMs ?? 60_000;
  }

  async token(): Promise<EksToken> {
    const now = this.options.clock.now();
    const current = this.cached ? await this.cached.catch(() => undefined) : undefined;
    if (current && now < current.expiresAt - this.renewBeforeMs) return current;
    const next = this.presign(now);
    this.cached = next;
    next.catch(() => {
      if (this.cached === next) this.cached = undefined;
    });
    return next;
  }

  /** Forgets the cached token (after a 401). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async presign(now: number): Promise<EksToken> {
    const credentials = await this.options.credentials();
    return presignEksToken({
      clusterName: this.options.clusterName,
      region: this.options.region,
      credentials,
      now,
    });
  }
}
