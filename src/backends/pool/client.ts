import { DroverError } from '../../errors.js';
import type { DroverPaths } from '../../paths.js';
import { ApiClient, ApiError, readTokenFile } from '../../protocol/client.js';
import { readServerInfo, serverFiles } from './server-info.js';

/** Where the CLI finds its controller: flags, then DROVER_SERVER / DROVER_TOKEN, then `.drover/server/`. */
export interface ServerFlags {
  server?: string;
  tokenFile?: string;
}

/** A client for this folder's controller (user token). */
export function connect(paths: DroverPaths, flags: ServerFlags = {}): ApiClient {
  const url = flags.server ?? process.env.DROVER_SERVER ?? readServerInfo(paths)?.url;
  if (!url) {
    throw new DroverError(
      'usage',
      'no drover server here: start one with drover server (or give --server URL / DROVER_SERVER)',
    );
  }
  const token =
    flags.tokenFile !== undefined
      ? readTokenFile(flags.tokenFile)
      : (process.env.DROVER_TOKEN ?? readTokenFile(serverFiles(paths).token));
  return new ApiClient(url.replace(/\/+$/, ''), token);
}

/** Turn an API refusal into the CLI's error shape (exit 2 for refusals of the request, 1 otherwise). */
export function apiError(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.status === 0) return new DroverError('backend', err.message, { cause: err });
  const code =
    err.status === 404
      ? 'not-found'
      : err.status === 409
        ? 'conflict'
        : err.status < 500
          ? 'usage'
          : 'backend';
  return new DroverError(code, err.message, { cause: err });
}

/** Call the API and turn refusals into CLI errors. */
export async function call<T>(api: ApiClient, method: string, path: string, body?: unknown): Promise<T> {
  try {
    return await api.call<T>(method, path, body);
  } catch (err) {
    throw apiError(err);
  }
}
