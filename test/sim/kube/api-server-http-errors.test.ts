/**
 * The API server twin's answers to malformed requests: each a Kubernetes Status with the code
 * and reason the real server gives.
 */
import { NS, useApiServer } from './api-server-fixture.js';

describe('Kubernetes API server twin: malformed requests', () => {
  const twin = useApiServer();

  it.each([
    ['POST', `/api/v1/namespaces/${NS}/pods`, '{not json', 'application/json', 400, 'BadRequest'],
    [
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/x`,
      '{}',
      'application/json',
      415,
      'UnsupportedMediaType',
    ],
    ['GET', '/api/v1/namespaces/x/widgets', undefined, 'application/json', 404, 'NotFound'],
    ['POST', `/api/v1/namespaces/${NS}/pods/x`, '{}', 'application/json', 405, 'MethodNotAllowed'],
    ['GET', `/api/v1/namespaces/${NS}/pods/x/log`, undefined, 'application/json', 404, 'NotFound'],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ apiVersion: 'v2', kind: 'Pod', metadata: { name: 'x' } }),
      'application/json',
      400,
      'BadRequest',
    ],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } }),
      'application/json',
      422,
      'Invalid',
    ],
    [
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({
        metadata: { name: 'x', labels: { 'bad key!': 'v' } },
        spec: { containers: [{ name: 'c' }] },
      }),
      'application/json',
      422,
      'Invalid',
    ],
    [
      'GET',
      `/api/v1/namespaces/${NS}/pods?limit=5&continue=%00%01`,
      undefined,
      'application/json',
      400,
      'BadRequest',
    ],
    [
      'DELETE',
      `/api/v1/namespaces/${NS}/pods/x?propagationPolicy=Sideways`,
      undefined,
      'application/json',
      400,
      'BadRequest',
    ],
  ])('%s %s → %i', async (method, path, body, contentType, status, reason) => {
    const res = await twin.call(method, path, body, contentType);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ kind: 'Status', reason, code: status });
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const res = await twin.call(
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      JSON.stringify({ metadata: { name: 'big', annotations: { a: 'x'.repeat(3_200_000) } } }),
    );
    expect(res.status).toBe(413);
  });
});
