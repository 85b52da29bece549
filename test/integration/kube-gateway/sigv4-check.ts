import { createHash, createHmac } from 'node:crypto';

/** The presigned STS URL inside an EKS token; throws when the token is not one. */
export function decodeEksToken(token: string): URL {
  const prefix = 'k8s-aws-v1.';
  const body = token.startsWith(prefix) ? token.slice(prefix.length) : '';
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw new Error('not an EKS token');
  return new URL(Buffer.from(body, 'base64url').toString('utf8'));
}

const enc = (s: string) =>
  encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
const hmac = (key: Buffer | string, data: string) =>
  createHmac('sha256', key).update(data).digest();

/** Recomputes the SigV4 query signature as STS would check it, with the headers EKS sends. */
export function expectedSignature(
  url: URL,
  headers: Record<string, string>,
  secret: string,
): string {
  const q = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const query = q
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort()
    .join('&');
  const signed = (url.searchParams.get('X-Amz-SignedHeaders') ?? '').split(';');
  const canonicalHeaders = signed.map((h) => `${h}:${headers[h] ?? ''}\n`).join('');
  const emptyHash = createHash('sha256').update('').digest('hex');
  const canonical = ['GET', '/', query, canonicalHeaders, signed.join(';'), emptyHash].join('\n');
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const scope = (url.searchParams.get('X-Amz-Credential') ?? '').split('/').slice(1).join('/');
  const toSign = [
    'AWS4-HMAC-SHA256',
    date,
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  const [day, region, service] = scope.split('/');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${secret}`, day ?? ''), region ?? ''), service ?? ''),
    'aws4_request',
  );
  return createHmac('sha256', key).update(toSign).digest('hex');
}
