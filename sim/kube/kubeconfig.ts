/**
 * A kubeconfig (YAML) for the twin's API server, for client-node `loadFromString` and kubectl.
 * It points at the HTTPS listener and trusts the loopback certificate (kubectl sends bearer
 * tokens only over TLS; client-node 2.x refuses `http://` unless TLS checks are skipped).
 */
import { stringify } from 'yaml';

export function renderKubeconfig(options: {
  clusterName: string;
  server: string;
  caPem: string;
  user: string;
  token: string;
  namespace?: string;
}): string {
  const context = `${options.user}@${options.clusterName}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: options.clusterName,
        cluster: {
          server: options.server,
          'certificate-authority-data': Buffer.from(options.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: options.user, user: { token: options.token } }],
    contexts: [
      {
        name: context,
        context: {
          cluster: options.clusterName,
          user: options.user,
          ...(options.namespace ? { namespace: options.namespace } : {}),
        },
      },
    ],
    'current-context': context,
    preferences: {},
  });
}
