/**
 * What the MQTT tests share: a real Mosquitto broker on a free port of its own, started and stopped
 * by the test, and a subscriber (MQTT.js, as the publisher) that keeps the last payload of every
 * topic it is sent and lets a test wait for one. Where `mosquitto` is missing the suite is skipped,
 * except with `CI=true`, where that is a failure.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect, createServer } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';

const BINARIES = ['/usr/sbin/mosquitto', 'mosquitto'];

/** The mosquitto binary, or undefined where there is none. */
function mosquittoBinary(): string | undefined {
  return BINARIES.find((binary) => spawnSync(binary, ['-h']).error === undefined);
}

/** Why the MQTT suites cannot run here, or undefined; on CI a missing broker throws instead. */
export function mosquittoSkipReason(): string | undefined {
  if (mosquittoBinary() !== undefined) return undefined;
  const reason = 'mosquitto is not installed (apt-get install -y mosquitto)';
  if (process.env['CI'] === 'true') throw new Error(`${reason}; on CI the MQTT tests must run`);
  return reason;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

export interface Broker {
  readonly port: number;
  readonly url: string;
  /** Stops this broker process (its retained messages are gone with it: no persistence). */
  stop(): Promise<void>;
}

/**
 * A Mosquitto broker listening on 127.0.0.1 (`port`, else a free one), ready once it says it runs.
 * @example const broker = await startBroker(); ...; await broker.stop()
 */
export async function startBroker(port?: number): Promise<Broker> {
  const binary = mosquittoBinary();
  if (binary === undefined) throw new Error('mosquitto is not installed');
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn(binary, ['-p', String(chosen), '-v'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      if (/running/.test(output)) resolve();
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`mosquitto exited with ${code}: ${output}`)));
  });
  await accepting(chosen);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port: chosen,
    url: `mqtt://127.0.0.1:${chosen}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves once 127.0.0.1:`port` accepts a connection: "running" can come just before the listener. */
async function accepting(port: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (attempt >= 200) throw new Error(`mosquitto does not accept connections on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface Subscriber {
  /** The last payload of every topic received, as text. */
  readonly last: Map<string, string>;
  /** Every payload of `topic` received, in order. */
  all(topic: string): string[];
  /** Resolves with the payload once `topic`'s last payload passes `test` (the test's timeout bounds the wait). */
  until(topic: string, test?: (payload: string) => boolean): Promise<string>;
  close(): Promise<void>;
}

/** A client subscribed to every topic under `filters` (`prefix/#`), retained messages included. */
export async function subscribe(url: string, filters: readonly string[]): Promise<Subscriber> {
  const client: MqttClient = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  const last = new Map<string, string>();
  const history = new Map<string, string[]>();
  const waiters = new Set<() => void>();
  client.on('message', (topic, payload) => {
    const text = payload.toString();
    last.set(topic, text);
    history.set(topic, [...(history.get(topic) ?? []), text]);
    for (const wake of [...waiters]) wake();
  });
  await client.subscribeAsync(filters.map((f) => `${f}/#`));
  return {
    last,
    all: (topic) => history.get(topic) ?? [],
    until(topic, test = () => true) {
      return new Promise((resolve) => {
        const check = () => {
          const payload = last.get(topic);
          if (payload === undefined || !test(payload)) return;
          waiters.delete(check);
          resolve(payload);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      await client.endAsync(true);
    },
  };
}
