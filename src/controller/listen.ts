import net from 'node:net';
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import { DroverError } from '../errors.js';

/** Where the controller listens and what it tells workers and clients. */

/** True for an address only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '::ffff:127.0.0.1') return true;
  return net.isIPv4(h) && h.startsWith('127.');
}

/** True for the "every interface" addresses (0.0.0.0, ::): not an address anyone can connect to. */
export function isUnspecified(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/**
 * The address to tell workers when listening on `host`: `host` itself, unless it is 0.0.0.0 or ::, which no
 * one can connect to: then this machine's first external address of that family (or its host name).
 */
export function advertisedHost(
  host: string,
  interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces(),
): string {
  if (!isUnspecified(host)) return host;
  const family = host.includes(':') ? 'IPv6' : 'IPv4';
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (!a.internal && a.family === family && !(family === 'IPv6' && a.address.startsWith('fe80'))) {
        return a.address;
      }
    }
  }
  return os.hostname();
}

/** `http://HOST:PORT`, with brackets for IPv6. */
export function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** Listen, or throw a usage error (exit 2) that says why in words and what to do. */
export async function listenOrExplain(
  app: FastifyInstance,
  host: string,
  port: number,
  who = 'drover server',
): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (err) {
    await app.close().catch(() => {});
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? `port ${port} is in use on ${host}: pick another with --port (0: any free port)`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `--host ${host} is not an address of this machine: give one of its addresses, or 127.0.0.1`
          : code === 'EACCES'
            ? `port ${port} needs privileges on ${host}: pick a port above 1023 with --port`
            : undefined;
    if (why === undefined) throw err;
    throw new DroverError('usage', `${who} cannot listen on ${host}:${port}: ${why}`, { cause: err });
  }
}
