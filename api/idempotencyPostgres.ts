// Idempotency-Key answers in PostgreSQL (AUTHCAP_IDEMPOTENCY_DATABASE_URL), so API processes on
// several hosts agree on every key: one row per (scope, key), claimed by whoever inserts it first.
//
// Why a database and not Temporal's own dedup: a workflow id (one workflow per order) and an update
// id make the *effect* happen once, but neither can give a retry the first answer's status and
// body, tell a key reused with another body from a retry, or cover refusals answered before any
// workflow starts (a 422 for a signature that is not the payer's, or for a refund of more than was
// captured); and keeping fingerprints and answers in workflow histories would cost every merchant
// history bytes.
// Refunds already get their once-ness from Temporal too: the Idempotency-Key is passed down as the
// refund's request key (api/server.ts, client/refunds/create.ts), so a retry after a 202, which is not
// kept here, still finds the same refund. This store adds the replayed answer on top.
import pg from 'pg';
import { AuthcapError } from '../domain/errors.js';
import { createLogger } from '../runtime/logger.js';
import { KEEP_MS, type IdempotencyClaim, type IdempotencyStore, type StoredResponse } from './idempotency.js';
import { newOwner, ownerGone, type ClaimOwner } from './idempotencyOwner.js';

const logger = createLogger('authcap-api');

export const IDEMPOTENCY_TABLE = 'authcap_idempotency_keys';
/** Serialises the CREATE TABLE of API processes starting together (IF NOT EXISTS alone can race). */
const SCHEMA_LOCK = 0x6175_7468_6361_70n;
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/**
 * A pending claim's holder touches it this often while it works on the request; one untouched for
 * PENDING_STALE_MS belonged to a process that died (on any host): a retry on another API takes it
 * over within seconds, where a pid cannot be checked across hosts.
 */
const PENDING_TOUCH_MS = 5_000;
export const PENDING_STALE_MS = 20_000;
const SWEEP_BATCH = 1_000;

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${IDEMPOTENCY_TABLE} (
    scope text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    owner jsonb NOT NULL,
    status integer,
    response json,
    PRIMARY KEY (scope, key)
  )`,
  `CREATE INDEX IF NOT EXISTS ${IDEMPOTENCY_TABLE}_created_at ON ${IDEMPOTENCY_TABLE} (created_at)`,
];

type Row = {
  fingerprint: string;
  owner: Partial<ClaimOwner> | null;
  /** Null while the first request is still being answered. */
  status: number | null;
  response: unknown;
  expired: boolean;
  stale: boolean;
};

export interface PostgresIdempotencyOptions {
  /** Connections per API process (default 10). */
  maxConnections?: number;
}

export class PostgresIdempotencyStore implements IdempotencyStore {
  private lastSweep = 0;

  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and makes the table if it is missing: a wrong URL or a database that is down stops the start here. */
  static async open(connectionString: string, options: PostgresIdempotencyOptions = {}): Promise<PostgresIdempotencyStore> {
    const pool = new pg.Pool({
      connectionString,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      // A database that hangs must not hold a request for the whole request timeout.
      query_timeout: 10_000,
      application_name: 'authcap-api',
    });
    // An idle connection dropped (PostgreSQL restarted) is an 'error' on the pool: noted, not fatal.
    pool.on('error', (err) => logger.warn({ err: err.message }, 'idempotency database: an idle connection failed'));
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK.toString()]);
        for (const statement of SCHEMA) await client.query(statement);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new Error(`the idempotency database (AUTHCAP_IDEMPOTENCY_DATABASE_URL) cannot be used: ${(err as Error).message}`);
    }
    return new PostgresIdempotencyStore(pool);
  }

  async claim(scope: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    this.sweepNowAndThen();
    try {
      // A row can vanish (released, swept) or change hands between two statements: look again, a few times.
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const owner = newOwner();
        const inserted = await this.pool.query(
          `INSERT INTO ${IDEMPOTENCY_TABLE} (scope, key, fingerprint, owner) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING RETURNING 1`,
          [scope, key, fingerprint, JSON.stringify(owner)],
        );
        if (inserted.rowCount === 1) return this.newClaim(scope, key, owner);
        // The database's clock judges age, so hosts whose clocks differ agree on what is stale.
        const { rows } = await this.pool.query<Row>(
          `SELECT fingerprint, owner, status, response,
                  clock_timestamp() - created_at > make_interval(secs => $3) AS expired,
                  clock_timestamp() - created_at > make_interval(secs => $4) AS stale
             FROM ${IDEMPOTENCY_TABLE} WHERE scope = $1 AND key = $2`,
          [scope, key, KEEP_MS / 1000, PENDING_STALE_MS / 1000],
        );
        const row = rows[0];
        if (!row) continue;
        const pending = row.status === null;
        const abandoned = pending && (row.stale || ownerGone(row.owner));
        if (!row.expired && !abandoned) {
          if (row.fingerprint !== fingerprint) return { kind: 'reused' };
          if (pending) return { kind: 'in_progress' };
          return { kind: 'replay', response: { status: row.status!, body: row.response } };
        }
        // Expired, or its process is gone: take it over, unless another process just did (its claim id changed).
        const taken = await this.pool.query(
          `UPDATE ${IDEMPOTENCY_TABLE}
              SET fingerprint = $3, owner = $4::jsonb, created_at = clock_timestamp(), status = NULL, response = NULL
            WHERE scope = $1 AND key = $2 AND owner->>'claim' IS NOT DISTINCT FROM $5`,
          [scope, key, fingerprint, JSON.stringify(owner), row.owner?.claim ?? null],
        );
        if (taken.rowCount === 1) return this.newClaim(scope, key, owner);
      }
      return { kind: 'in_progress' };
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Deletes up to `limit` answers older than KEEP_MS; how many it deleted. */
  async sweep(limit = SWEEP_BATCH): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM ${IDEMPOTENCY_TABLE} WHERE (scope, key) IN (
         SELECT scope, key FROM ${IDEMPOTENCY_TABLE}
          WHERE created_at < clock_timestamp() - make_interval(secs => $1)
          ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [KEEP_MS / 1000, limit],
    );
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private newClaim(scope: string, key: string, owner: ClaimOwner): IdempotencyClaim {
    // created_at of a pending claim is its holder's last sign of life (of an answered one, its age).
    const touch = setInterval(() => {
      this.pool
        .query(`UPDATE ${IDEMPOTENCY_TABLE} SET created_at = clock_timestamp() WHERE scope = $1 AND key = $2 AND owner->>'claim' = $3 AND status IS NULL`, [
          scope,
          key,
          owner.claim,
        ])
        .catch((err: Error) => logger.warn({ err: err.message }, 'idempotency database: a pending claim could not be touched'));
    }, PENDING_TOUCH_MS);
    touch.unref();
    return {
      kind: 'new',
      complete: async (response: StoredResponse) => {
        clearInterval(touch);
        const { rowCount } = await this.pool.query(
          `UPDATE ${IDEMPOTENCY_TABLE} SET status = $4, response = $5::json WHERE scope = $1 AND key = $2 AND owner->>'claim' = $3`,
          [scope, key, owner.claim, response.status, JSON.stringify(response.body ?? null)],
        );
        // Only when this request outlived the stale timeout and another took its key over.
        if (rowCount === 0) logger.warn({ scope }, 'an Idempotency-Key answer was not kept: its claim had been taken over');
      },
      release: async () => {
        clearInterval(touch);
        await this.pool.query(`DELETE FROM ${IDEMPOTENCY_TABLE} WHERE scope = $1 AND key = $2 AND owner->>'claim' = $3 AND status IS NULL`, [
          scope,
          key,
          owner.claim,
        ]);
      },
    };
  }

  /** In the background, so no request waits for it; a full batch means more is due soon. */
  private sweepNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.sweep().then(
      (deleted) => {
        if (deleted >= SWEEP_BATCH) this.lastSweep = now - SWEEP_EVERY_MS + 10_000;
      },
      (err: Error) => logger.warn({ err: err.message }, 'idempotency database: sweeping expired answers failed'),
    );
  }
}

/** The database did not answer: nothing ran, so a retry with the same key is safe. */
function unavailable(err: unknown): AuthcapError {
  logger.error({ err: (err as Error).message }, 'idempotency database: a claim failed');
  return new AuthcapError(
    'idempotency_unavailable',
    'Idempotency-Key answers cannot be read right now (their database did not answer); nothing was run: retry with the same key',
  );
}
