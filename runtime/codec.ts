// The payload codec: every payload authcap sends through Temporal (workflow inputs, activity
// arguments and results, update arguments, the memo) is sealed with AES-256-GCM, so the payer's
// signature, a payment credential, never sits in clear text in history or in the server's database.
// Keys rotate: the key id travels in each payload's metadata; one key seals, all listed keys open.
// Each payload is also bound to its place: the workflow it was sent to (start input, signal, update,
// memo, query) or the activity it was made for (arguments, result, heartbeat), from the SDK's
// serialization context. The place is sealed inside the payload (its inner metadata), so AES-GCM
// authenticates it with the data: a payload copied out of one history opens only where it was sealed
// for, and anywhere else it is refused like a plain one.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { SEAL_MARKER, unsealedInput, type UnsealedReason } from '../domain/sealed.js';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const ENCODING_KEY = 'encoding';
const KEY_ID_KEY = 'encryption-key-id';
/** Inside the seal: where the payload may be opened (absent: sealed outside any place, by the codec server for an operator). */
const PLACE_KEY = 'authcap-place';
/** Inside the seal: who sealed it. Absent: an authcap process holding the key. */
const ORIGIN_KEY = 'authcap-origin';
const OPERATOR_ORIGIN = 'operator';
const JSON_ENCODING = 'json/plain';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodecKeys {
  /** The key id that seals new payloads. */
  active: string;
  keys: Map<string, Buffer>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Seals and opens payloads. `decode` authenticates: a payload it cannot open as sealed by one of its
 * keys comes out as the unsealed marker (domain/sealed.ts) for the interceptors to refuse, never as
 * the data it claims to carry. The codec server uses `openForDisplay` and `sealForOperator` instead.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keys: CodecKeys) {
    if (!keys.keys.has(keys.active)) throw new Error(`codec: the active key ${keys.active} is not among the keys`);
  }

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const place = placeOf(context);
    return payloads.map((payload) => this.seal(payload, place));
  }

  /**
   * Opens what was sealed for this place. Without a context (a client's list, the doctor's sample)
   * a bound payload opens as it is: every path on which a payload is acted on (a workflow's
   * activation, an activity's task) has one.
   */
  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const expected = placeOf(context);
    return payloads.map((payload) => {
      const opened = this.open(payload);
      if ('unsealed' in opened) return jsonPayload(unsealedInput(opened.unsealed));
      const { inner, place } = opened;
      if (expected !== undefined && place !== undefined && place !== expected) return jsonPayload(unsealedInput('misplaced'));
      const operator = decoder.decode(inner.metadata?.[ORIGIN_KEY] ?? new Uint8Array()) === OPERATOR_ORIGIN;
      // Sealed for no place, where a place is expected, and not by an operator: refused like a plain one.
      if (expected !== undefined && place === undefined && !operator) return jsonPayload(unsealedInput('unplaced'));
      if (!operator) return inner;
      // An operator's input (the UI's signal, sealed by the codec server) reaches only what an
      // operator may do: the interceptors see who sealed it.
      if (decoder.decode(inner.metadata?.[ENCODING_KEY] ?? new Uint8Array()) !== JSON_ENCODING) return jsonPayload(unsealedInput('malformed'));
      try {
        return jsonPayload({ [SEAL_MARKER]: OPERATOR_ORIGIN, value: JSON.parse(decoder.decode(inner.data ?? new Uint8Array())) });
      } catch {
        return jsonPayload(unsealedInput('malformed'));
      }
    });
  }

  /**
   * Keys for other uses, derived from the payload keys (HMAC-SHA256 under each, the active one
   * first): every process that holds the payload keys holds these, and they rotate with them.
   */
  deriveKeys(label: string): Buffer[] {
    const ordered = [this.keys.active, ...[...this.keys.keys.keys()].filter((id) => id !== this.keys.active)];
    return ordered.map((id) => createHmac('sha256', this.keys.keys.get(id)!).update(`authcap:${label}`).digest());
  }

  /** The codec server's /decode: what a payload says, for people to read (plain ones as they are). */
  async openForDisplay(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isSealed(payload)) return payload;
      const opened = this.open(payload);
      if ('unsealed' in opened) throw new Error(`codec: cannot open this payload (${opened.unsealed})`);
      return opened.inner;
    });
  }

  /** The codec server's /encode: sealed, and marked as an operator's (it can void, nothing more). */
  async sealForOperator(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal({ ...payload, metadata: { ...payload.metadata, [ORIGIN_KEY]: encoder.encode(OPERATOR_ORIGIN) } }, undefined));
  }

  private seal(payload: Payload, place: string | undefined): Payload {
    const key = this.keys.keys.get(this.keys.active)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    // The whole payload (its metadata too, the place among it) is sealed: the inner encoding says how
    // to read it back, the place where.
    const inner = place === undefined ? payload : { ...payload, metadata: { ...payload.metadata, [PLACE_KEY]: encoder.encode(place) } };
    const plain = Buffer.from(JSON.stringify(toJson(inner)), 'utf8');
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [ENCODING_KEY]: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_KEY]: encoder.encode(this.keys.active) },
      data: sealed,
    };
  }

  private open(payload: Payload): { inner: Payload; place: string | undefined } | { unsealed: UnsealedReason } {
    if (!isSealed(payload)) return { unsealed: 'plain' };
    const keyId = decoder.decode(payload.metadata?.[KEY_ID_KEY] ?? new Uint8Array());
    const key = this.keys.keys.get(keyId);
    if (!key) {
      // Loud: a worker missing a key that sealed real payloads must be noticed (add it to AUTHCAP_CODEC_KEYS).
      console.error(`authcap codec: a payload is sealed with key id "${keyId}", which this process does not hold (AUTHCAP_CODEC_KEYS)`);
      return { unsealed: 'unknown_key' };
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) return { unsealed: 'malformed' };
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      const opened = fromJson(JSON.parse(plain.toString('utf8')) as JsonPayload);
      const placeBytes = opened.metadata?.[PLACE_KEY];
      if (!placeBytes) return { inner: opened, place: undefined };
      // The place is the codec's, not the data converter's: handed on without it.
      const { [PLACE_KEY]: _place, ...metadata } = opened.metadata!;
      return { inner: { ...opened, metadata }, place: decoder.decode(placeBytes) };
    } catch {
      return { unsealed: 'tampered' };
    }
  }
}

/**
 * Where a payload belongs: the workflow it is sent to, or the activity (of its workflow) it is made
 * for. Local or not is left out: both kinds share the workflow's sequence of activity ids.
 */
export function placeOf(context: SerializationContext | undefined): string | undefined {
  if (!context) return undefined;
  // JSON: ids may hold any character, and no two places may read the same.
  if (context.type === 'workflow') return JSON.stringify(['workflow', context.namespace, context.workflowId]);
  return JSON.stringify(['activity', context.namespace, context.workflowId ?? '', context.activityId ?? '']);
}

function isSealed(payload: Payload): boolean {
  return decoder.decode(payload.metadata?.[ENCODING_KEY] ?? new Uint8Array()) === ENCRYPTED_ENCODING;
}

function jsonPayload(value: unknown): Payload {
  return { metadata: { [ENCODING_KEY]: encoder.encode(JSON_ENCODING) }, data: encoder.encode(JSON.stringify(value)) };
}

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

function toJson(payload: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(payload.metadata ?? {})) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

function fromJson(json: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(json.metadata)) metadata[k] = new Uint8Array(Buffer.from(v, 'base64'));
  return { metadata, data: new Uint8Array(Buffer.from(json.data, 'base64')) };
}

/**
 * `kid:base64key,kid:base64key`: the first seals, all open. Each key is 32 random bytes
 * (`openssl rand -base64 32`).
 */
export function parseCodecKeys(spec: string): CodecKeys {
  const keys = new Map<string, Buffer>();
  let active: string | undefined;
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = part.indexOf(':');
    if (at <= 0) throw new Error('AUTHCAP_CODEC_KEYS must look like "kid1:<base64 key>,kid0:<base64 key>"');
    const id = part.slice(0, at);
    const key = Buffer.from(part.slice(at + 1), 'base64');
    if (key.length !== 32) throw new Error(`codec key ${id} must be 32 bytes (base64), got ${key.length}`);
    keys.set(id, key);
    active ??= id;
  }
  if (!active) throw new Error('AUTHCAP_CODEC_KEYS lists no key');
  return { active, keys };
}

/** A key file: {"active": "kid1", "keys": {"kid1": "<base64>", "kid0": "<base64>"}}. */
export function readCodecKeyFile(file: string): CodecKeys {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { active: string; keys: Record<string, string> };
  const spec = [parsed.active, ...Object.keys(parsed.keys).filter((k) => k !== parsed.active)].map((id) => `${id}:${parsed.keys[id]}`).join(',');
  return parseCodecKeys(spec);
}

/**
 * The variables a codec is made of, as a process's entry read them (its settings; a raw environment
 * has the same shape, and these variables' rules take the text as it is).
 */
export interface CodecSettings {
  AUTHCAP_CODEC_KEYS?: string;
  AUTHCAP_CODEC_KEY_FILE?: string;
  /** "off": plain payloads (tests only). */
  AUTHCAP_CODEC?: string;
}

/** The codec of AUTHCAP_CODEC_KEYS, else of AUTHCAP_CODEC_KEY_FILE; undefined without either. */
export function codecOf(settings: CodecSettings): EncryptionCodec | undefined {
  if (settings.AUTHCAP_CODEC_KEYS) return new EncryptionCodec(parseCodecKeys(settings.AUTHCAP_CODEC_KEYS));
  if (settings.AUTHCAP_CODEC_KEY_FILE) return new EncryptionCodec(readCodecKeyFile(settings.AUTHCAP_CODEC_KEY_FILE));
  return undefined;
}

/** codecOf, for a process's start: without keys it refuses unless AUTHCAP_CODEC=off says plain payloads are wanted (never in production). */
export function requireCodec(settings: CodecSettings): EncryptionCodec | undefined {
  const codec = codecOf(settings);
  if (!codec && settings.AUTHCAP_CODEC !== 'off') {
    throw new Error(
      'authcap: no payload encryption key. Set AUTHCAP_CODEC_KEYS (or AUTHCAP_CODEC_KEY_FILE); AUTHCAP_CODEC=off runs without encryption (tests only).',
    );
  }
  return codec;
}

/** The dev stack's key, made once and kept (0600) so histories stay readable across restarts. */
export function ensureDevCodecKeys(stateDir: string): string {
  const file = join(stateDir, 'codec-keys.json');
  if (!existsSync(file)) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify({ active: 'dev1', keys: { dev1: randomBytes(32).toString('base64') } }, null, 2)}\n`, { mode: 0o600 });
  }
  chmodSync(file, 0o600);
  const keys = readCodecKeyFile(file);
  return [...keys.keys]
    .sort(([a], [b]) => (a === keys.active ? -1 : b === keys.active ? 1 : 0))
    .map(([id, key]) => `${id}:${key.toString('base64')}`)
    .join(',');
}
