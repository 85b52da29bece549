import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';

export interface AppCredentials {
  appId: number;
  clientId: string;
  /** PKCS#1 PEM, as GitHub hands App private keys out. */
  privateKey: string;
  publicKey: KeyObject;
}

/**
 * The simulated GitHub App's own key (PKCS#1, as GitHub hands App keys out). It protects nothing:
 * keys are not part of a run's outcome, and generating one costs some 90 ms of CPU, which each
 * scenario play and GitHub test paid. Regenerate with `openssl genrsa -traditional 2048`.
 */
const TWIN_APP_KEY_PEM = readFileSync(new URL('./app-key.pem', import.meta.url), 'utf8');

/** The simulated GitHub App's credentials: the twin's own key unless one is given. */
export function createAppCredentials(
  appId: number,
  privateKeyPem: string = TWIN_APP_KEY_PEM,
): AppCredentials {
  return {
    appId,
    clientId: `Iv1.${appId.toString(16)}`,
    privateKey: privateKeyPem,
    publicKey: createPublicKey(privateKeyPem),
  };
}

export type JwtCheck = { ok: true } | { ok: false; message: string };

/** GitHub's App JWT rules: RS256, iss = app id (or client id), iat in the past, exp at most 10 min ahead. */
export function checkAppJwt(jwt: string, credentials: AppCredentials, nowMs: number): JwtCheck {
  const parts = jwt.split('.');
  const [headerPart, payloadPart, signaturePart] = parts;
  if (parts.length !== 3 || !headerPart || !payloadPart || signaturePart === undefined)
    return notDecodable();
  const header = parseJson(headerPart);
  const payload = parseJson(payloadPart);
  if (!header || !payload || header['alg'] !== 'RS256') return notDecodable();
  const signed = verify(
    'RSA-SHA256',
    Buffer.from(`${headerPart}.${payloadPart}`),
    credentials.publicKey,
    Buffer.from(signaturePart, 'base64url'),
  );
  if (!signed) return notDecodable();
  const iss = String(payload['iss']);
  if (iss !== String(credentials.appId) && iss !== credentials.clientId)
    return { ok: false, message: 'Integration not found' };
  const now = Math.floor(nowMs / 1000);
  const iat = payload['iat'];
  const exp = payload['exp'];
  if (typeof iat !== 'number' || iat > now + 60)
    return {
      ok: false,
      message:
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued.",
    };
  if (typeof exp !== 'number' || exp <= now)
    return {
      ok: false,
      message:
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.",
    };
  if (exp > now + 600 || exp - iat > 660)
    return { ok: false, message: "'Expiration time' claim ('exp') is too far in the future." };
  return { ok: true };
}

function notDecodable(): JwtCheck {
  return { ok: false, message: 'A JSON web token could not be decoded' };
}

function parseJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
