import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { idPrefixes } from '../../ids.js';

/** A key's lastUsedAt is written at most this often. */
export const KEY_USAGE_RESOLUTION_MS = 60_000;
const tokenPrefix = `${idPrefixes.token}_`;

interface Use {
  workspaceId: string;
  tokenId: string;
  at: string;
}

/**
 * When each API key was last used, kept off the hot path: a request notes its key in memory (a
 * map lookup; at most once a minute per key does it note a time), and `flush` writes what was
 * noted in one UPDATE for every key, every few seconds (and at close). A key's lastUsedAt is so
 * at most a minute (plus the flush interval) behind, and is written at most once a minute.
 * Sessions (not keys) are not noted.
 */
export class KeyUsage {
  private readonly notedAt = new Map<string, number>();
  private pending: Use[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  note(workspaceId: string, tokenId: string): void {
    if (!tokenId.startsWith(tokenPrefix)) return;
    const nowMs = Date.now();
    const last = this.notedAt.get(tokenId);
    if (last !== undefined && nowMs - last < KEY_USAGE_RESOLUTION_MS) return;
    if (this.notedAt.size > 100_000) this.notedAt.clear();
    this.notedAt.set(tokenId, nowMs);
    this.pending.push({ workspaceId, tokenId, at: this.clock.now().toISOString() });
  }

  /** Writes every noted use in one statement. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const uses = this.pending;
      if (uses.length === 0) return;
      this.pending = [];
      try {
        await sql`
          update api_tokens as t set last_used_at = u.at
          from unnest(${uses.map((use) => use.workspaceId)}::text[], ${uses.map((use) => use.tokenId)}::text[], ${uses.map((use) => use.at)}::timestamptz[]) as u(workspace_id, token_id, at)
          where t.workspace_id = u.workspace_id and t.token_id = u.token_id and (t.last_used_at is null or t.last_used_at < u.at)
        `.execute(this.db);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.flushing;
  }

  start(everyMs = 10_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
