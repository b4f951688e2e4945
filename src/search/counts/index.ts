import { type ControlledTransaction, type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Bitset } from './bitset.js';
import { type Column, textPrefixOf } from './columns.js';
import { forEachSlot, type MemberBitmap, memberBitmapOfSlots } from '../member-bitmap.js';
import type { ColumnSpec, CountPlan } from './plan.js';
import { type ColumnPhase, type CountNeeds, type CountResult, WorkspaceCounts } from './workspace.js';

export { planCount, sortColumnOf, type CountPlan } from './plan.js';

export interface SearchCountsOptions {
  /** People held across all workspaces before the least recently searched workspaces are dropped. */
  maxPeople: number;
  /** Studies held per workspace before the least recently searched are dropped. */
  maxStudies: number;
  /** Where a failed background preparation is reported (the search answered with SQL meanwhile). */
  onError(error: unknown, workspaceId: string): void;
}

/** A count's matches, for the page read in its snapshot: how many, and (listed on demand) their people's person_no. */
export interface Matches {
  total: number;
  personNos(): Int32Array;
  /** The same people as a bitmap of their person_no, for a page that walks an index keeping them. */
  bitmap(): MemberBitmap;
  /** The rows the count ranged over: the workspace's live people, or the study's participants whose person is live. */
  rows: number;
  /** The people the workspace's counts hold (the deleted among them too: a bound, for choosing how to read a page). */
  people: number;
  /**
   * The matches that can be on the page of a sort by a held column (see boundedPersonNos),
   * read at the count's version; undefined when they cannot be told exactly here.
   */
  bounded(bound: SortBound): BoundedMatches | undefined;
}

/**
 * The matches that can be on a page sorted by a held column (boundedPersonNos). Those `listed`
 * are read by person number. A value held by more matches than the page reads (the position's
 * own, or the limit's) is a tie: its matches all share the sort key, so the page takes them in
 * row-id order, and SQL reads only the first rows of each by id (run.ts, pageBounded) instead of
 * every one with its sort key. POST /people/search by age at 1,000,000 people, a deep page
 * between 948 people aged 29 and 870 aged 30: 16–22 ms in PostgreSQL listed, 5–7 walked by id;
 * at 8 clients, p50 98–114 ms before, 66–78 after (the first page: 80–103 → 65–73).
 */
export interface BoundedMatches {
  listed: Int32Array;
  ties: BoundedTie[];
}

/** A tie of BoundedMatches: the person numbers holding one value, and whether it is the position's (only rows past its id are on the page). */
export interface BoundedTie {
  personNos: Int32Array;
  atPosition: boolean;
}

/** How many person numbers BoundedMatches holds, listed and tied. */
export const boundedSize = (bounded: BoundedMatches) => bounded.ties.reduce((sum, tie) => sum + tie.personNos.length, bounded.listed.length);

/** Every person number of BoundedMatches, listed and tied. */
export function everyBounded(bounded: BoundedMatches): Int32Array {
  const all = new Int32Array(boundedSize(bounded));
  all.set(bounded.listed);
  let at = bounded.listed.length;
  for (const tie of bounded.ties) {
    all.set(tie.personNos, at);
    at += tie.personNos.length;
  }
  return all;
}

/**
 * A page sorted by a person's number, date-time or email (plan.ts, sortColumnOf): the column the counts hold it in,
 * the direction, how many rows the page reads (its size and one more), and the sort value of the
 * keyset position it starts after, as the cursor carries it (SQL's text of the value).
 */
export interface SortBound {
  column: ColumnSpec;
  direction: 'ASC' | 'DESC';
  rows: number;
  after?: string | null;
}

/** How a search's total was counted: by the counts held in process, or by SQL (`preparing`: while the counts load for it). */
export type CountedBy = 'counts' | 'sql' | 'preparing';

/**
 * Exact search totals from columns held in process (src/search/counts/workspace.ts), derived from
 * the database and caught up with its change log before every count, so that a write committed
 * through any instance is counted by the next search on every other. A search whose plan or
 * workspace the counts cannot answer yet is answered by SQL, and the counts are prepared for it in
 * the background.
 */
export class SearchCounts {
  private readonly workspaces = new Map<string, WorkspaceCounts>();
  private readonly preparing = new Map<string, Promise<void>>();
  /** Per workspace, the batch of searches waiting for its lock that a newcomer joins. */
  private readonly forming = new Map<WorkspaceCounts, Batch>();
  private closed = false;
  /** Totals answered, by how: tests and the bench read these. */
  readonly answered: Record<'counts' | 'sql', number> = { counts: 0, sql: 0 };
  /** How the counts' answers began: without the workspace's lock (nothing new to apply) or under it. */
  readonly paths: Record<'lockFree' | 'locked' | 'joined', number> = { lockFree: 0, locked: 0, joined: 0 };
  /** What counts took from earlier ones at the same version (workspace.ts, `reusedLeaves`): whole results, and leaves. */
  readonly reused: Record<'results' | 'leaves', number> = { results: 0, leaves: 0 };

  constructor(
    /** The workspace's handle (src/db/tenancy.ts): every statement of the counts is one workspace's. */
    private readonly dbFor: (workspaceId: string) => Kysely<DB>,
    private readonly options: SearchCountsOptions,
  ) {}

  /**
   * The exact count of `plan` over the workspace's live people (or a study's participants whose
   * person is live), and `page` read in the same repeatable-read snapshot; undefined when the
   * counts are not ready for this plan: `preparing` when they are being prepared for it in the
   * background, `sql` when they cannot answer it (an inexact column), and SQL is to count.
   */
  async count<T>(
    workspaceId: string,
    studyId: string | undefined,
    plan: CountPlan,
    page: (transaction: Kysely<DB>, matches: Matches) => Promise<T>,
    sortColumn?: ColumnSpec,
  ): Promise<{ by: 'counts'; total: number; page: T } | { by: 'sql' | 'preparing' }> {
    const needs = needsOf(plan, studyId);
    // A sort column not held yet does not hold a count up: it is loaded for the next pages (Matches.bounded).
    // Emails are held only for a filter naming them: a million of them take some 30 MB.
    // A participant's column is held per study: only a search of a study's participants can be bounded by one.
    const sortToHold = sortColumn && sortColumn.kind !== 'haystack' && (sortColumn.source === 'person' || studyId !== undefined) ? sortColumn : undefined;
    const sortStudyId = sortToHold?.source === 'participant' ? studyId : undefined;
    const withSort = (base: CountNeeds): CountNeeds =>
      !sortToHold ? base : sortStudyId === undefined ? { ...base, personColumns: [...base.personColumns, sortToHold] } : { ...base, studyId: sortStudyId, participantColumns: [...base.participantColumns, sortToHold] };
    const workspace = this.workspaces.get(workspaceId);
    const state = workspace?.state(needs) ?? 'missing';
    if (!workspace || state !== 'ready') {
      if (state === 'missing') this.prepare(workspaceId, withSort(needs));
      this.answered.sql++;
      return { by: this.isPreparing(workspaceId) ? 'preparing' : 'sql' };
    }
    if (sortToHold && !workspace.holds(sortToHold.key, sortStudyId)) this.prepare(workspaceId, withSort({ personColumns: [], participantColumns: [] }));
    workspace.lastUsed = Date.now();
    let started = await this.lockFree(workspace, needs, plan, studyId);
    if (started) this.paths.lockFree++;
    else {
      started = await this.locked(workspace, needs, plan, studyId);
      if (started) this.paths.locked++;
    }
    let answer: { total: number; page: T } | undefined;
    if (started) {
      const { transaction, columns } = started;
      try {
        if (columns.reused) this.reused.results++;
        this.reused.leaves += columns.leavesReused;
        const result = columns.reused ?? (await this.countAnew(transaction, workspace, plan, studyId, columns));
        const { total } = result;
        const matches: Matches = {
          total,
          personNos: () => (result.personNos ??= personNosOf(result.matched, columns.personNos, total)),
          bitmap: () => (result.bitmap ??= memberBitmapOfSlots(result.matched.words, columns.personNos, columns.orderedSlots)),
          rows: columns.domain.slots.length,
          people: columns.slots,
          bounded: (bound) => {
            // The held values are the snapshot's only while nothing was applied since the count read its leaves.
            if (workspace.busy || workspace.version !== columns.version) return undefined;
            if (bound.column.source === 'participant') {
              const held = studyId === undefined ? undefined : workspace.heldStudySortColumn(studyId, bound.column.key);
              return held && boundedPersonNos(result.matched, columns.personNos, held, bound, columns.domain);
            }
            const held = workspace.heldSortColumn(bound.column.key);
            return held && boundedPersonNos(result.matched, columns.personNos, held, bound);
          },
        };
        answer = { total, page: await page(transaction, matches) };
      } catch (error) {
        await started.finish(false);
        throw error;
      }
      await started.finish(true);
    }
    if (!answer) {
      this.prepare(workspaceId, needs);
      this.answered.sql++;
      return { by: this.isPreparing(workspaceId) ? 'preparing' : 'sql' };
    }
    this.answered.counts++;
    return { by: 'counts', ...answer };
  }

  /**
   * The common case, without the lock: the probe (the transaction's first statement, so its
   * snapshot) finds nothing to apply, and the counts did not move or start moving between sending
   * it and reading the column leaves, which happens synchronously after it: they are then exactly
   * at the snapshot, which the page reads too. Otherwise undefined, and the locked way follows.
   */
  private async lockFree(workspace: WorkspaceCounts, needs: CountNeeds, plan: CountPlan, studyId: string | undefined): Promise<Started | undefined> {
    if (workspace.busy) return undefined;
    const version = workspace.version;
    const transaction = await this.dbFor(workspace.workspaceId).startTransaction().setIsolationLevel('repeatable read').execute();
    try {
      const probe = await workspace.probe(transaction);
      if (!workspace.busy && workspace.version === version && workspace.isAt(probe) && workspace.state(needs) === 'ready') {
        return { transaction, columns: workspace.evaluateColumns(plan, studyId), finish: alone(transaction) };
      }
    } catch (error) {
      await transaction.rollback().execute();
      throw error;
    }
    await transaction.rollback().execute();
    return undefined;
  }

  /**
   * With changes to apply: the workspace's lock is always taken before a connection, never while
   * holding one (a search holding a connection while it waited for a preparation that waits for a
   * connection would deadlock the embedded store's single connection, or a pool under load). The
   * snapshot is taken by the transaction's first statement, the catch-up, under the lock: the
   * counts stay at that snapshot until the column leaves are read, and the rest (SQL leaves, the
   * page) reads it too.
   *
   * The searches that arrive while one waits for the lock join it: one catch-up, in one snapshot
   * taken after every one of them arrived (so each sees every write committed before it), serves
   * them all, and they share its transaction. Under a steady stream of writes nearly every search
   * finds a change to apply; caught up one at a time they queued behind each other's catch-ups
   * (soak: 97% of searches, 210 ms each at ~110 searches/s beside ~250 writes/s).
   */
  private locked(workspace: WorkspaceCounts, needs: CountNeeds, plan: CountPlan, studyId: string | undefined): Promise<Started | undefined> {
    return new Promise((resolve, reject) => {
      const member = { needs, plan, studyId, resolve, reject };
      const forming = this.forming.get(workspace);
      if (forming) {
        forming.members.push(member);
        this.paths.joined++;
        return;
      }
      const batch: Batch = { members: [member] };
      this.forming.set(workspace, batch);
      void workspace.exclusive(async () => {
        // Closed from here: a search arriving now waits for the next catch-up, whose snapshot follows its arrival.
        if (this.forming.get(workspace) === batch) this.forming.delete(workspace);
        const { members } = batch;
        let transaction: ControlledTransaction<DB> | undefined;
        try {
          transaction = await this.dbFor(workspace.workspaceId).startTransaction().setIsolationLevel('repeatable read').execute();
          const caughtUp = await workspace.catchUp(transaction, false);
          const ready = members.filter((one) => caughtUp && workspace.state(one.needs) === 'ready');
          const finish = ready.length > 0 ? shared(transaction, ready.length) : undefined;
          if (!finish) await transaction.rollback().execute();
          const open = transaction;
          const answers = members.map((one) => (ready.includes(one) ? { transaction: open, columns: workspace.evaluateColumns(one.plan, one.studyId), finish: finish! } : undefined));
          members.forEach((one, index) => one.resolve(answers[index]));
        } catch (error) {
          await transaction?.rollback().execute();
          for (const one of members) one.reject(error);
        }
      });
    });
  }

  /** Whether the workspace's counts are being prepared in the background. */
  isPreparing(workspaceId: string): boolean {
    return this.preparing.has(workspaceId);
  }

  /** Resolves when no preparation is under way (tests, and closing). */
  async settled(): Promise<void> {
    while (this.preparing.size > 0) await Promise.allSettled([...this.preparing.values()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  /** Builds or catches up the workspace's counts and loads what `needs` names, in the background. */
  private prepare(workspaceId: string, needs: CountNeeds): void {
    if (this.closed || this.preparing.has(workspaceId)) return;
    let workspace = this.workspaces.get(workspaceId);
    if (!workspace) {
      workspace = new WorkspaceCounts(workspaceId);
      this.workspaces.set(workspaceId, workspace);
    }
    const counts = workspace;
    const work = counts
      .exclusive(async () => {
        const transaction = await this.dbFor(workspaceId).startTransaction().setIsolationLevel('repeatable read').execute();
        try {
          await counts.catchUp(transaction, true);
          await counts.ensure(transaction, needs);
          await transaction.commit().execute();
        } catch (error) {
          await transaction.rollback().execute();
          throw error;
        }
      })
      .then(() => {
        counts.lastUsed = Date.now();
        counts.trimStudies(this.options.maxStudies);
        this.trimWorkspaces(workspaceId);
      })
      .catch((error: unknown) => {
        // Whatever was half loaded is dropped: the next search starts the workspace again from the database.
        this.workspaces.delete(workspaceId);
        if (!this.closed) this.options.onError(error, workspaceId);
      })
      .finally(() => this.preparing.delete(workspaceId));
    this.preparing.set(workspaceId, work);
  }

  private trimWorkspaces(keep: string): void {
    let held = [...this.workspaces.values()].reduce((sum, workspace) => sum + workspace.slots, 0);
    if (held <= this.options.maxPeople) return;
    const byAge = [...this.workspaces.values()].filter((workspace) => workspace.workspaceId !== keep).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const workspace of byAge) {
      if (held <= this.options.maxPeople) break;
      this.workspaces.delete(workspace.workspaceId);
      held -= workspace.slots;
    }
  }

  /** The count of `plan` from its column leaves and its SQL leaves, kept for the next count at the same version. */
  private async countAnew(transaction: Kysely<DB>, workspace: WorkspaceCounts, plan: CountPlan, studyId: string | undefined, columns: ColumnPhase): Promise<CountResult> {
    const sqlLeaves = await this.sqlLeaves(transaction, workspace, plan, studyId, columns);
    const matched = combine(plan, columns, sqlLeaves).and(columns.domain.bits);
    const result = { matched, total: matched.count() };
    workspace.remember(columns, result);
    return result;
  }

  /** The SQL leaves' matches, each one statement in the count's snapshot, as person slots. */
  private async sqlLeaves(transaction: Kysely<DB>, workspace: WorkspaceCounts, plan: CountPlan, studyId: string | undefined, columns: ColumnPhase): Promise<Map<CountPlan, Bitset>> {
    const { slots, doubts, personNos: personNoOf, leaves: certain } = columns;
    const leaves = new Map<CountPlan, Bitset>();
    for (const leaf of leavesOf(plan, 'sql')) {
      if (leaf.kind !== 'sql') continue;
      // Over a study, only its participants' people: without an index for the condition that is a
      // scan of the study's rows, where the workspace's people would be ten times as many.
      const { rows } =
        studyId === undefined
          ? await sql<{ person_no: number }>`
              select p.person_no from people as p
              where p.workspace_id = ${workspace.workspaceId} and p.deleted_at is null and ${leaf.condition}`.execute(transaction)
          : await sql<{ person_no: number }>`
              select p.person_no from participants as pt
                join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
              where pt.workspace_id = ${workspace.workspaceId} and pt.study_id = ${studyId} and p.deleted_at is null and ${leaf.condition}`.execute(transaction);
      leaves.set(leaf, workspace.bitsOf(rows.map((row) => row.person_no), slots));
    }
    // A split leaf's doubtful people, decided one by one by its condition: a few, or none at all.
    for (const [leaf, doubtful] of doubts) {
      if (leaf.kind !== 'split') continue;
      const personNos = [...doubtful.slots()].map((slot) => personNoOf[slot]!);
      const { rows } = await sql<{ person_no: number }>`
        select p.person_no from people as p
        where p.workspace_id = ${workspace.workspaceId} and p.person_no = any(cast(${`{${personNos.join(',')}}`} as int4[])) and p.deleted_at is null and ${leaf.condition}`.execute(transaction);
      leaves.set(leaf, certain.get(leaf)!.or(workspace.bitsOf(rows.map((row) => row.person_no), slots)));
    }
    return leaves;
  }
}

/** A count's transaction, at the snapshot its column leaves were read at. */
interface Started {
  transaction: Kysely<DB>;
  columns: ColumnPhase;
  /** Ends this count's use of the transaction (committed, or rolled back after an error). */
  finish(ok: boolean): Promise<void>;
}

/** Searches waiting for the workspace's lock, to be caught up together (see `locked`). */
interface Batch {
  members: { needs: CountNeeds; plan: CountPlan; studyId: string | undefined; resolve(started: Started | undefined): void; reject(error: unknown): void }[];
}

/**
 * One read-only transaction several counts use at once (the pg client and PGlite queue their
 * statements): it ends when the last of them finishes.
 */
function shared(transaction: ControlledTransaction<DB>, users: number): (ok: boolean) => Promise<void> {
  let left = users;
  let failed = false;
  return async (ok) => {
    if (!ok) failed = true;
    if (--left > 0) return;
    if (failed) await transaction.rollback().execute();
    else await transaction.commit().execute();
  };
}

function alone(transaction: ControlledTransaction<DB>): (ok: boolean) => Promise<void> {
  return async (ok) => {
    if (ok) await transaction.commit().execute();
    else await transaction.rollback().execute();
  };
}

function personNosOf(matched: Bitset, personNoOf: Int32Array, total: number): Int32Array {
  const personNos = new Int32Array(total);
  let next = 0;
  forEachSlot(matched.words, (slot) => {
    personNos[next++] = personNoOf[slot]!;
  });
  return personNos;
}

/**
 * The person numbers of the matches that can be among the first `bound.rows` rows past the
 * position, in a sort by `held` (numbers, date-times in microseconds, or texts in their bytes'
 * order, which Column.bytewiseOrder vouches is the database's): those whose value lies from the position's value up to the
 * `rows`-th smallest value strictly past it (largest, descending). SQL still sorts them and applies
 * the keyset, so the page is exact: every row past the position with a value up to that limit is
 * listed, and at least `rows` of them lie past the position, so none beyond the limit can be on
 * the page. Undefined when fewer than `rows` matches hold a number past the position (the rest
 * sort last, as no value, and SQL must see them all) or the position is past every value.
 * `held` is a person's column, indexed by slot; or, given `studyRows` (a study count's domain:
 * each participant's person slot and row), a column of the study's participants, indexed by row.
 * Numbers and date-times held by more than `rows` matches at the position's value or the limit's
 * come as ties (BoundedMatches); texts are all listed (emails are unique: ties are few).
 */
export function boundedPersonNos(
  matched: Bitset,
  personNoOf: Int32Array,
  held: Column,
  bound: Pick<SortBound, 'direction' | 'rows' | 'after'> & { column: Pick<ColumnSpec, 'kind'> },
  studyRows?: { slots: Int32Array; rows: Int32Array },
): BoundedMatches | undefined {
  const sign = bound.direction === 'ASC' ? 1 : -1;
  if (bound.column.kind !== 'haystack') {
    // Descending is ascending over the negated values; NaN (no value) fails every comparison.
    let after = Number.NEGATIVE_INFINITY;
    if (bound.after !== undefined) {
      const value = bound.after === null ? Number.NaN : bound.column.kind === 'micros' ? timestampMicros(bound.after) : Number(bound.after);
      if (!Number.isFinite(value)) return undefined;
      after = sign * value;
    }
    return numbersBounded(matched, personNoOf, held.numbers, sign, after, bound.rows, studyRows);
  }
  // Texts are held for people only (emails).
  if (studyRows || bound.after === null) return undefined;
  const listed = textsBounded(matched, personNoOf, held, sign, bound.after === undefined ? undefined : Buffer.from(bound.after, 'utf8'), bound.rows);
  return listed && { listed, ties: [] };
}

/**
 * boundedPersonNos over texts in their bytes' order. A first pass keeps the `rows` least keys of
 * the texts past the position, a key being a text's first six bytes as one number (times `sign`),
 * which orders texts as their bytes do up to ties: the rows-th least key bounds the page. The
 * matches whose key ties with it are then ordered by their whole texts, to cut exactly at the
 * rows-th text. Comparing whole texts in a heap of slots instead cost 9 ms a 1000-row page of
 * 15,500 matches at a million people (emails sharing their first six bytes by first name); the
 * keys read from the haystack itself, 5.6 ms (Column's prefixes).
 */
function textsBounded(matched: Bitset, personNoOf: Int32Array, held: Column, sign: 1 | -1, after: Buffer | undefined, rows: number): Int32Array | undefined {
  const afterKey = after === undefined ? Number.NEGATIVE_INFINITY : sign * textPrefixOf(after);
  /** The exact order of a text against the position's, for a key that ties with the position's key. */
  const againstAfter = (slot: number) => sign * held.compareTextWith(slot, after!, sign * afterKey);
  const least = new LeastKeys(rows);
  const words = matched.words;
  // Both passes read each match's key from the column's prefixes, an array they walk forward.
  for (let index = 0; index < words.length; index++) {
    for (let word = words[index]!; word !== 0; word = (word ^ (word & -word)) >>> 0) {
      const slot = (index << 5) + (31 - Math.clz32(word & -word));
      const key = sign * held.textPrefixAt(slot);
      if (key > afterKey || (key === afterKey && againstAfter(slot) > 0)) least.offer(key, slot);
    }
  }
  const kept = least.finish();
  if (!kept) return undefined;
  const limitKey = kept.limit;
  const personNos: number[] = [];
  /** Past the position, below the limit's key: on the page or before it. */
  let pastBelow = 0;
  const tied: number[] = [];
  for (let index = 0; index < words.length; index++) {
    for (let word = words[index]!; word !== 0; word = (word ^ (word & -word)) >>> 0) {
      const slot = (index << 5) + (31 - Math.clz32(word & -word));
      const key = sign * held.textPrefixAt(slot);
      if (!(key >= afterKey && key <= limitKey)) continue;
      const fromAfter = key === afterKey ? againstAfter(slot) : 1;
      if (fromAfter < 0) continue;
      if (key < limitKey) {
        personNos.push(personNoOf[slot]!);
        if (fromAfter > 0) pastBelow++;
      } else tied.push(slot);
    }
  }
  // The limit is the (rows - pastBelow)-th least text past the position among the tied; texts at
  // the position's own value are listed, as from() does for numbers, but do not count.
  const order = (a: number, b: number) => sign * held.compareTexts(a, b);
  // Ties are few (a few hundred emails share a first name's six bytes among 15,500): sorted whole.
  const tiedPast = after === undefined || limitKey !== afterKey ? [...tied] : tied.filter((slot) => againstAfter(slot) > 0);
  const limit = tiedPast.sort(order)[rows - pastBelow - 1]!;
  for (const slot of tied) if (order(slot, limit) <= 0) personNos.push(personNoOf[slot]!);
  return Int32Array.from(personNos);
}

/**
 * boundedPersonNos over numbers (date-times in microseconds). Keys are the values times `sign`
 * (descending is ascending over negated values), and NaN (no value) fails every comparison. A
 * person's column is read at each match's slot; a study's (given `studyRows`, the count's domain)
 * at its row. The matches past the position are offered to a LeastKeys, and those it keeps are
 * classified against the `rows`-th least key, the limit.
 */
function numbersBounded(
  matched: Bitset,
  personNoOf: Int32Array,
  values: Float64Array,
  sign: 1 | -1,
  after: number,
  rows: number,
  studyRows: { slots: Int32Array; rows: Int32Array } | undefined,
): BoundedMatches | undefined {
  const least = new LeastKeys(rows);
  const atPosition: number[] = [];
  if (studyRows) {
    const { slots, rows: positions } = studyRows;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (!matched.has(slot)) continue;
      const key = sign * values[positions[i]!]!;
      if (key > after) least.offer(key, slot);
      else if (key === after) atPosition.push(personNoOf[slot]!);
    }
  } else {
    // The bits walked here as forEachSlot walks them, without its callback per match (which took twice as long).
    const words = matched.words;
    for (let index = 0; index < words.length; index++) {
      for (let word = words[index]!; word !== 0; word = (word ^ (word & -word)) >>> 0) {
        const slot = (index << 5) + (31 - Math.clz32(word & -word));
        const key = sign * values[slot]!;
        if (key > after) least.offer(key, slot);
        else if (key === after) atPosition.push(personNoOf[slot]!);
      }
    }
  }
  const kept = least.finish();
  if (!kept) return undefined;
  const { keys, slots, count, limit } = kept;
  const between: number[] = [];
  const atLimit: number[] = [];
  for (let i = 0; i < count; i++) {
    const key = keys[i]!;
    if (key < limit) between.push(personNoOf[slots[i]!]!);
    else if (key === limit) atLimit.push(personNoOf[slots[i]!]!);
  }
  // A value held by no more matches than the page reads is listed: walking its ties by id would pass more rows than it lists.
  const ties: BoundedTie[] = [];
  for (const [tied, isPosition] of [
    [atPosition, true],
    [atLimit, false],
  ] as const) {
    if (tied.length > rows) ties.push({ personNos: Int32Array.from(tied).sort(), atPosition: isPosition });
    else for (const personNo of tied) between.push(personNo);
  }
  // In person number order: selection leaves the kept in an order of its own, and the same page should send the same statement.
  return { listed: Int32Array.from(between).sort(), ties };
}

/**
 * The `rows` least keys offered, with their slots, and every other key equal to the rows-th least
 * (the limit). Offers fill a buffer of a few pages; a full buffer is cut to the keys up to its
 * rows-th least, which becomes the bar an offer must not pass. Each key costs a comparison with the
 * bar, whatever the order keys come in: a heap of the `rows` least (before) took a sift for nearly
 * every key when a column's values follow slot order against the sort (recent contacts on
 * recently added people, sorted descending): E1's 1000-row page of 35,000 matches spent 3.5–4.7 ms
 * there. Ties at the bar are all kept, so the buffer grows to hold a tie wider than it.
 */
export class LeastKeys {
  private keys: Float64Array;
  private slots: Int32Array;
  private count = 0;
  private bar = Number.POSITIVE_INFINITY;

  constructor(private readonly rows: number) {
    const capacity = Math.max(4 * rows, 1024);
    this.keys = new Float64Array(capacity);
    this.slots = new Int32Array(capacity);
  }

  offer(key: number, slot: number): void {
    if (!(key <= this.bar)) return;
    if (this.count === this.keys.length) this.cut();
    this.keys[this.count] = key;
    this.slots[this.count++] = slot;
  }

  /** The kept keys (unordered) and the limit; undefined when fewer than `rows` keys were offered. */
  finish(): { keys: Float64Array; slots: Int32Array; count: number; limit: number } | undefined {
    if (this.count < this.rows) return undefined;
    const limit = selectLeast(this.keys, this.slots, this.count, this.rows - 1);
    return { keys: this.keys, slots: this.slots, count: this.count, limit };
  }

  /** Keeps the keys up to the rows-th least, which becomes the bar; grows when a tie at it fills most of the buffer. */
  private cut(): void {
    const { keys, slots } = this;
    this.bar = selectLeast(keys, slots, this.count, this.rows - 1);
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      if (keys[i]! > this.bar) continue;
      keys[kept] = keys[i]!;
      slots[kept++] = slots[i]!;
    }
    this.count = kept;
    if (kept > keys.length / 2) {
      this.keys = new Float64Array(keys.length * 2);
      this.slots = new Int32Array(keys.length * 2);
      this.keys.set(keys.subarray(0, kept));
      this.slots.set(slots.subarray(0, kept));
    }
  }
}

/**
 * The k-th least (0-based) of keys[0, count), by quickselect with a random pivot and a three-way
 * partition (ties are common: ages, dates), moving each slot with its key. Expected time linear
 * in `count`, whatever the keys' order.
 */
export function selectLeast(keys: Float64Array, slots: Int32Array, count: number, k: number): number {
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const pivot = keys[low + Math.floor(Math.random() * (high - low + 1))]!;
    // [low, less) < pivot, [less, at) = pivot, (greater, high] > pivot.
    let less = low;
    let at = low;
    let greater = high;
    while (at <= greater) {
      const key = keys[at]!;
      if (key < pivot) swap(keys, slots, less++, at++);
      else if (key > pivot) swap(keys, slots, at, greater--);
      else at++;
    }
    if (k < less) high = less - 1;
    else if (k > greater) low = greater + 1;
    else return pivot;
  }
  return keys[k]!;
}

function swap(keys: Float64Array, slots: Int32Array, a: number, b: number): void {
  const key = keys[a]!;
  keys[a] = keys[b]!;
  keys[b] = key;
  const slot = slots[a]!;
  slots[a] = slots[b]!;
  slots[b] = slot;
}

/** PostgreSQL's text of a timestamptz (ISO DateStyle, any zone) as microseconds since the epoch, as the counts hold date-times; NaN for any other text (infinity, BC, years past 9999). */
export function timestampMicros(text: string): number {
  const parts = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/.exec(text);
  // Date.UTC reads years below 100 as 19xx.
  if (!parts || Number(parts[1]) < 100) return Number.NaN;
  const [, year, month, day, hour, minute, second, fraction = '', offsetSign, offsetHours, offsetMinutes = '0', offsetSeconds = '0'] = parts;
  const offset = (offsetSign === '-' ? -1 : 1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds));
  const seconds = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)) / 1000 - offset;
  const micros = seconds * 1_000_000 + Number(fraction.padEnd(6, '0'));
  return Number.isSafeInteger(micros) ? micros : Number.NaN;
}

function leavesOf(plan: CountPlan, kind: 'column' | 'split' | 'sql'): CountPlan[] {
  if (plan.kind === 'and' || plan.kind === 'or') return plan.items.flatMap((item) => leavesOf(item, kind));
  if (plan.kind === 'not') return leavesOf(plan.item, kind);
  return plan.kind === kind ? [plan] : [];
}

function needsOf(plan: CountPlan, studyId: string | undefined): CountNeeds {
  const specs = [...leavesOf(plan, 'column'), ...leavesOf(plan, 'split')].flatMap((leaf) => (leaf.kind === 'column' || leaf.kind === 'split' ? [leaf.column] : []));
  const unique = (source: ColumnSpec['source']) => [...new Map(specs.filter((spec) => spec.source === source).map((spec) => [spec.key, spec])).values()];
  return { personColumns: unique('person'), studyId, participantColumns: unique('participant') };
}

function combine(plan: CountPlan, columns: ColumnPhase, sqlLeaves: Map<CountPlan, Bitset>): Bitset {
  switch (plan.kind) {
    case 'all':
      return columns.domain.bits;
    case 'and':
      return plan.items.map((item) => combine(item, columns, sqlLeaves)).reduce((all, next) => all.and(next), columns.domain.bits);
    case 'or': {
      const [first, ...rest] = plan.items.map((item) => combine(item, columns, sqlLeaves));
      return first ? rest.reduce((any, next) => any.or(next), first) : columns.domain.bits.not();
    }
    case 'not':
      return combine(plan.item, columns, sqlLeaves).not();
    case 'column':
      return columns.leaves.get(plan)!;
    case 'split':
      return sqlLeaves.get(plan) ?? columns.leaves.get(plan)!;
    case 'sql':
      return sqlLeaves.get(plan)!;
  }
}
