import { createRequire } from 'node:module';

interface ExampleGroup {
  name: string;
  examples: Record<string, unknown>[];
}

const require = createRequire(import.meta.url);
const groups = require('@octokit/webhooks-examples/api.github.com/index.json') as ExampleGroup[];

/** Every example payload GitHub's own schema package ships for an event. */
export function examplesFor(event: string): Record<string, unknown>[] {
  const group = groups.find((g) => g.name === event);
  if (!group) throw new Error(`no examples for ${event}`);
  return group.examples;
}

/** As a GitHub App receives it: every App delivery carries `installation`. */
export function asAppDelivery(example: Record<string, unknown>): Record<string, unknown> {
  return example.installation
    ? example
    : { ...example, installation: { id: 4242, node_id: 'MDIz' } };
}
