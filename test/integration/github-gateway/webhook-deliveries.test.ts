import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimClock } from '../../../sim/clock.js';
import { GitHubSim } from '../../../sim/github/github-sim.js';
import { gatewayFor } from './gateway-fixture.js';

const clock = new SimClock(Date.now());
const sim = new GitHubSim({ clock, seed: 31 });
const received: string[] = [];
let answer = 500;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received.push(String(req.headers['x-github-delivery']));
    res.writeHead(answer);
    res.end();
  });
});

beforeAll(async () => {
  await sim.start();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  sim.setWebhookTarget({ url: `http://127.0.0.1:${port}/webhook`, secret: 's' });
  sim.createOrg('acme');
  sim.createRepo('acme/app');
  sim.createInstallation('acme');
  sim.defineWorkflow('acme/app', { name: 'ci', jobs: [{ name: 'build', runsOn: 'arc-linux' }] });
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await sim.stop();
});

describe('GitHub gateway: the App’s webhook deliveries (App JWT)', () => {
  it('lists failed attempts and asks for a redelivery that keeps the delivery id', async () => {
    const gateway = gatewayFor(sim);
    sim.triggerRun('acme/app', 'ci');
    await clock.advance(1000);
    const failedGuids = [...received];
    expect(failedGuids.length).toBeGreaterThan(0);

    const attempts = await gateway.listDeliveryAttempts(clock.now() - 60_000);
    expect(attempts.map((a) => a.statusCode)).toEqual(failedGuids.map(() => 500));
    expect(new Set(attempts.map((a) => a.guid))).toEqual(new Set(failedGuids));
    expect(attempts.every((a) => !a.redelivery && a.id > 0)).toBe(true);

    answer = 202;
    const first = attempts[attempts.length - 1];
    expect(await gateway.redeliver(first?.id ?? 0)).toEqual({ result: 'done' });
    await clock.advance(1000);

    expect(received[received.length - 1]).toBe(first?.guid);
    const after = await gateway.listDeliveryAttempts(clock.now() - 60_000);
    expect(
      after.filter((a) => a.guid === first?.guid).map((a) => [a.redelivery, a.statusCode]),
    ).toEqual([
      [true, 202],
      [false, 500],
    ]);
    expect(await gateway.redeliver(987_654)).toMatchObject({ result: 'not-found' });
  });

  it('leaves out attempts older than asked', async () => {
    const gateway = gatewayFor(sim);
    expect(await gateway.listDeliveryAttempts(clock.now() + 60_000)).toEqual([]);
  });
});
