import type { Principal } from '../auth/token-registry.js';

export interface RequestContext {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  params: Record<string, string>;
  /** Who called, from the `Authorization` token (undefined for JWT-authenticated App routes). */
  principal: Principal | undefined;
  /** Base URL of this server, for Link headers. */
  baseUrl: string;
}

export interface ApiResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type RouteHandler = (ctx: RequestContext) => ApiResponse;

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** GitHub's path template, e.g. `/repos/{owner}/{repo}/actions/jobs/{job_id}`. */
  path: string;
  /** `token`: installation or user token; `jwt`: the App's JWT. */
  auth: 'token' | 'jwt';
  handler: RouteHandler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

/** Matches a request to a route; returns `method-not-allowed` when only the path matches. */
export class Router {
  private readonly routes: CompiledRoute[] = [];

  add(...routes: Route[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      this.routes.push({ ...route, regex: new RegExp(`^${source}/?$`), names });
    }
  }

  match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | 'method-not-allowed' | undefined {
    let pathMatched = false;
    for (const route of this.routes) {
      const found = route.regex.exec(path);
      if (!found) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => (params[name] = decodeURIComponent(found[i + 1] ?? '')));
      return { route, params };
    }
    return pathMatched ? 'method-not-allowed' : undefined;
  }
}

function errorBody(status: number, message: string) {
  return { message, documentation_url: 'https://docs.github.com/rest', status: String(status) };
}

export function error(
  status: number,
  message: string,
  headers?: Record<string, string>,
): ApiResponse {
  return { status, body: errorBody(status, message), ...(headers ? { headers } : {}) };
}
