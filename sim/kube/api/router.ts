/** Maps request paths to resources: /api/v1/..., /apis/{group}/{version}/..., legacy /watch/. */
import { findResource, type ResourceDef } from './resources.js';

export type Route =
  | { kind: 'discovery'; path: string }
  | {
      kind: 'resource';
      def: ResourceDef;
      namespace?: string;
      name?: string;
      subresource?: string;
      /** The legacy `/watch/` path prefix. */
      watchPath: boolean;
    }
  | { kind: 'unknown' };

const DISCOVERY = /^\/(version|healthz|livez|readyz|api|apis|openapi\/v2|openapi\/v3)(\/|$)/;

export function route(pathname: string): Route {
  const segs = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 3) {
    group = '';
    version = segs[1] as string;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 4) {
    group = segs[1] as string;
    version = segs[2] as string;
    rest = segs.slice(3);
  } else if (DISCOVERY.test(pathname)) {
    return { kind: 'discovery', path: '/' + segs.join('/') };
  } else return { kind: 'unknown' };

  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  // namespaces/{ns}/{plural}/... or namespaces/{name}[/status] (the Namespace object itself).
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const def = findResource(group, version, rest[2] as string);
    if (def?.namespaced) {
      if (rest.length > 5) return { kind: 'unknown' };
      return {
        kind: 'resource',
        def,
        namespace: rest[1],
        name: rest[3],
        subresource: rest[4],
        watchPath,
      };
    }
  }
  const def = findResource(group, version, rest[0] as string);
  if (!def || rest.length > 3) return { kind: 'unknown' };
  if (def.namespaced && rest.length > 1) return { kind: 'unknown' };
  return { kind: 'resource', def, name: rest[1], subresource: rest[2], watchPath };
}
