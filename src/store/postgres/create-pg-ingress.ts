import type pg from 'pg';
import { COALESCE_SEPARATOR, coalescedGrowth, MAX_COALESCED_CHARS } from '../coalesce-separator.js';
import type { StallWatch } from '../create-stall-watch.js';
import { DuplicateRequestError } from '../duplicate-request-error.js';
import { joinedAnswers } from '../joined-answers.js';
import { toIdempotency, type IdempotencyRow } from '../rows.js';
import { publishedOfRun } from '../log-rows.js';
import type { IngressStore } from '../store.js';
import type { IdempotencyRecord, NewRun, RecordedGroup } from '../types.js';
import { batchStatement, type IngressWrite, type PgGroupCommit } from './create-pg-group-commit.js';
import { nowSql, type PgContext } from './pg-context.js';

/** Rolls the request's transaction back. */
class Duplicate extends Error {}

/**
 * Takes the transaction-scoped advisory lock of each coalesce key, in the order of the keys' hashes
 * so two requests holding several keys never wait for each other in a cycle.
 */
async function lockCoalesceKeys(client: pg.ClientBase, keys: readonly string[]): Promise<void> {
  await client.query(
    `SELECT pg_advisory_xact_lock(hashtext('hookgate coalesce ' || current_schema()), h)
      FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($1::text[]) AS k ORDER BY h) AS keys`,
    [keys],
  );
}

export function createPgIngress(ctx: PgContext, group: PgGroupCommit, stalls: StallWatch): IngressStore {
  return {
    async addSystemEvent(event) {
      ctx.checkWritable();
      stalls.check();
      await group.submit({ kind: 'event', event });
    },
    async enqueueRun(run) {
      ctx.checkWritable();
      stalls.check();
      await group.submit({ kind: 'run', run });
    },
    async recordActions(a) {
      stalls.check();
      const watched = stalls.begin();
      try {
        return await ctx.tx(async (client) => {
          // A concurrent request with the same key waits on the unique index until the first commits.
          const claimed: IdempotencyRecord[] = [];
          const claim = async (k: IdempotencyRecord | null): Promise<boolean> => {
            if (k === null) return true;
            const { rowCount } = await client.query(
              `INSERT INTO idempotency_keys (hook, key, status, body, created_at, expires_at, fingerprint)
                VALUES ($1, $2, $3, $4, $5, $6, $8)
                ON CONFLICT (hook, key) DO UPDATE SET status = excluded.status, body = excluded.body, created_at = excluded.created_at,
                expires_at = excluded.expires_at, fingerprint = excluded.fingerprint
                WHERE idempotency_keys.expires_at <= ${nowSql(7)}`,
              [k.hook, k.key, k.status, k.body, k.createdAt, k.expiresAt, ctx.clockParam(), k.fingerprint ?? null],
            );
            if (rowCount === 1) claimed.push(k);
            return rowCount === 1;
          };
          if (!(await claim(a.idempotency))) throw new Duplicate();
          const groups: RecordedGroup[] = [a];
          const skippedItems: number[] = [];
          for (const [i, item] of (a.items ?? []).entries()) {
            if (await claim(item.idempotency)) groups.push(item);
            else skippedItems.push(i);
          }
          // A coalescing run joins the newest queued run of its key. Requests about one key, on any
          // replica, take turns from here to their commit, so a burst arriving at once finds the run
          // the first of them queued instead of each queueing its own.
          const coalescing = groups.flatMap((g) => g.runs).filter((run) => run.coalesce !== undefined);
          if (coalescing.length > 0)
            await lockCoalesceKeys(
              client,
              coalescing.map((run) => run.coalesce!.key),
            );
          const coalesced: Record<string, string> = {};
          // The runs this request queues, by id, with the messages of its later items joined to them,
          // and the newest of them by coalesce key: a later item about the key joins that one.
          const queuedHere = new Map<string, NewRun>();
          const newestHere = new Map<string, string>();
          const queueHere = (run: NewRun): void => {
            queuedHere.set(run.id, run);
            newestHere.set(run.coalesce!.key, run.id);
          };
          for (const run of coalescing) {
            const key = run.coalesce!.key;
            const here = queuedHere.get(newestHere.get(key) ?? '');
            if (here !== undefined) {
              if (here.message.length + coalescedGrowth(run.message) > MAX_COALESCED_CHARS) queueHere(run);
              else {
                queuedHere.set(here.id, { ...here, message: here.message + COALESCE_SEPARATOR + run.message });
                coalesced[run.id] = here.id;
              }
              continue;
            }
            const { rows } = await client.query(
              `UPDATE runs SET message = message || $1 || $2 WHERE seq = (SELECT seq FROM runs WHERE state = 'queued'
                AND coalesce_key = $3 AND coalesce_until > ${nowSql(4)} ORDER BY seq DESC LIMIT 1 FOR UPDATE)
                AND length(message) + $5 <= $6 RETURNING id`,
              [
                COALESCE_SEPARATOR,
                run.message,
                key,
                ctx.clockParam(),
                coalescedGrowth(run.message),
                MAX_COALESCED_CHARS,
              ],
            );
            const joined = rows[0] as { id: string } | undefined;
            if (joined !== undefined) coalesced[run.id] = joined.id;
            else queueHere(run);
          }
          const toWrite = (run: NewRun): NewRun => queuedHere.get(run.id) ?? run;
          const writes: IngressWrite[] = groups.flatMap((g) => [
            ...g.events.map((event): IngressWrite => ({ kind: 'event', event })),
            ...g.runs
              .filter((run) => coalesced[run.id] === undefined)
              .map((run): IngressWrite => ({ kind: 'run', run: toWrite(run) })),
            // A run that joined a queued run still publishes its request, naming the run it joined.
            ...g.runs.flatMap((run): IngressWrite[] => {
              const joined = coalesced[run.id];
              const event = joined === undefined ? undefined : publishedOfRun(run, joined);
              return event === undefined ? [] : [{ kind: 'published', event }];
            }),
            ...(g.published ?? []).map((event): IngressWrite => ({ kind: 'published', event })),
          ]);
          if (writes.length > 0) {
            const { text, values } = batchStatement(writes, ctx.channel);
            await client.query(text, values);
          }
          for (const a of joinedAnswers(claimed, coalesced)) {
            await client.query('UPDATE idempotency_keys SET body = $1 WHERE hook = $2 AND key = $3', [
              a.body,
              a.hook,
              a.key,
            ]);
          }
          return { skippedItems, coalesced };
        });
      } catch (error) {
        if (error instanceof Duplicate) throw new DuplicateRequestError(a.idempotency!.hook, a.idempotency!.key);
        throw error;
      } finally {
        stalls.end(watched);
      }
    },
    async findIdempotencyKey(hook, key) {
      const { rows } = await ctx.pool.query(
        `SELECT * FROM idempotency_keys WHERE hook = $1 AND key = $2 AND expires_at > ${nowSql(3)}`,
        [hook, key, ctx.clockParam()],
      );
      const row = rows[0] as IdempotencyRow | undefined;
      return row === undefined ? null : toIdempotency(row);
    },
  };
}
