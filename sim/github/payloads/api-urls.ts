/** Hosts used inside payloads and bodies (the real ones by default, as GitHub sends them). */
export interface ApiUrls {
  api: string;
  web: string;
}

export const GITHUB_URLS: ApiUrls = { api: 'https://api.github.com', web: 'https://github.com' };

/** ISO 8601 at second precision, as GitHub writes timestamps. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoSeconds(ms);
}
