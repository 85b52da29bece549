import { describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/core';
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods';
import { GATEWAY_ROUTES, gatewayRest } from '../../../../functions/adapters/github/gateway-rest.js';

/** octokit's own table of GitHub's routes, which the gateway's few methods must match. */
const octokit = new Octokit();
const octokitRest = restEndpointMethods(octokit).rest as unknown as Record<
  string,
  Record<string, { endpoint: { DEFAULTS: object } } | undefined>
>;
const ours = gatewayRest(octokit).rest as unknown as Record<
  string,
  Record<string, { endpoint: { DEFAULTS: object } }>
>;
const methods = Object.entries(GATEWAY_ROUTES).flatMap(([scope, routes]) =>
  Object.entries(routes).map(([name, route]) => [`${scope}.${name}`, scope, name, route] as const),
);

describe("the gateway's REST methods", () => {
  it.each(methods)('%s is octokit’s method of that name', (_, scope, name, route) => {
    const theirs = octokitRest[scope]?.[name];
    expect(theirs).toBeDefined();
    // The whole request defaults: the route, and the headers and media type octokit adds.
    expect(ours[scope]?.[name]?.endpoint.DEFAULTS).toEqual(theirs?.endpoint.DEFAULTS);
    const { method, url } = theirs?.endpoint.DEFAULTS as { method: string; url: string };
    expect(route).toBe(`${method} ${url}`);
  });

  it('are the methods of the table, and only those', () => {
    expect(Object.keys(ours).sort()).toEqual(Object.keys(GATEWAY_ROUTES).sort());
    for (const [scope, routes] of Object.entries(GATEWAY_ROUTES))
      expect(Object.keys(ours[scope] ?? {}).sort()).toEqual(Object.keys(routes).sort());
  });
});
