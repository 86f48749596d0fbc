// Who is on the other end of a loopback TCP connection. The dev Temporal UI has no login and serves
// its codec endpoint to anyone who asks (GET /api/v1/settings), so that URL cannot be a secret; the
// dev stack's codec server instead decodes for the same local user only: Linux lists, in the
// world-readable /proc/net/tcp, the owner (uid) of each socket, so the server looks up the client's
// end of the connection. Another user's process, or a page the user's browser opened elsewhere
// (wrong Origin), gets 401. Elsewhere (macOS, Windows) the lookup is unavailable: the token is needed.
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { isIPv4, isIPv6, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** IPv4 or IPv6 text → bytes in network order; undefined when not an address. */
function addressBytes(address: string): number[] | undefined {
  if (isIPv4(address)) return address.split('.').map(Number);
  if (!isIPv6(address)) return undefined;
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (v4) {
    const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const groups = tail === undefined ? part(head) : [...part(head), ...Array<string>(8 - part(head).length - part(tail).length).fill('0'), ...part(tail)];
  return groups.flatMap((g) => [(parseInt(g, 16) >> 8) & 0xff, parseInt(g, 16) & 0xff]);
}

/** How /proc/net/tcp{,6} prints an address: each 32-bit word in host byte order, then the port. */
export function procNetAddress(address: string, port: number): string | undefined {
  const bytes = addressBytes(address);
  if (!bytes) return undefined;
  const words: number[][] = [];
  for (let i = 0; i < bytes.length; i += 4) words.push(bytes.slice(i, i + 4));
  const hex = words.map((w) => (endianness() === 'LE' ? [...w].reverse() : w).map((b) => b.toString(16).padStart(2, '0')).join('')).join('');
  return `${hex.toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The uid owning the client's end of `socket` (a connection accepted here), if Linux can tell. */
export async function peerUid(socket: Socket): Promise<number | undefined> {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (process.platform !== 'linux' || !remoteAddress || !remotePort || !localAddress || !localPort) return undefined;
  const v4 = isIPv4(remoteAddress);
  const client = procNetAddress(remoteAddress, remotePort);
  const server = procNetAddress(localAddress, localPort);
  if (!client || !server) return undefined;
  const table = await readFile(v4 ? '/proc/net/tcp' : '/proc/net/tcp6', 'utf8').catch(() => '');
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid …: the client's socket is local=client.
    // A TIME_WAIT entry (06) is a remnant that the kernel lists with uid 0: never an answer.
    if (fields[1] === client && fields[2] === server && fields[3] !== '06') {
      const uid = Number(fields[7]);
      return Number.isInteger(uid) ? uid : undefined;
    }
  }
  return undefined;
}

function isLoopback(address: string | undefined): boolean {
  return !!address && (/^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address));
}

/**
 * A codec-server `trustRequest` for the dev stack: a loopback connection whose client socket belongs
 * to this process's own user, sent either by a program (no Origin: the `temporal` CLI) or by the
 * user's browser on the dev UI (Origin among `uiOrigins`), naming this server by its loopback
 * address in Host (no DNS rebinding).
 */
export function sameLocalUser(uiOrigins: string[]): (req: IncomingMessage) => Promise<boolean> {
  const checked = new WeakMap<Socket, Promise<boolean>>();
  return async (req) => {
    const uid = process.getuid?.();
    if (uid === undefined) return false;
    const origin = req.headers.origin;
    if (origin !== undefined && !uiOrigins.includes(origin)) return false;
    const socket = req.socket;
    if (!isLoopback(socket.remoteAddress)) return false;
    const host = req.headers.host ?? '';
    const hostName = host.replace(/:\d+$/, '');
    const hostPort = Number(/:(\d+)$/.exec(host)?.[1] ?? 80);
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(hostName) || hostPort !== socket.localPort) return false;
    // One lookup per connection: keep-alive requests reuse it.
    let verdict = checked.get(socket);
    if (!verdict) {
      verdict = peerUid(socket).then(
        (owner) => owner === uid,
        () => false,
      );
      checked.set(socket, verdict);
    }
    return verdict;
  };
}
