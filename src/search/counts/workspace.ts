import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { Bitset, wordsFor } from './bitset.js';
import { Column, readExpression } from './columns.js';
import type { MemberBitmap } from '../member-bitmap.js';
import { type ColumnSpec, type CountPlan, leafKey, reuseKey } from './plan.js';
import { SlotIndex } from './slot-index.js';

/** Rows read per statement while loading: bounds the memory a load takes, whatever the panel's size. */
const LOAD_BATCH = 20_000;
/** More changed people than this since the last search: a rebuild is cheaper than catching up. */
export const CATCH_UP_LIMIT = 20_000;

interface HeldColumn {
  spec: ColumnSpec;
  column: Column;
}

/** What a count needs held: the people's columns it reads, and a study's participants with theirs. */
export interface CountNeeds {
  personColumns: ColumnSpec[];
  studyId?: string;
  participantColumns: ColumnSpec[];
}

/** The rows a count ranges over, as parallel lists: each row's person slot, and where its participant values are. */
interface Domain {
  slots: Int32Array;
  rows: Int32Array;
  bits: Bitset;
}

/** Column-leaf results of a count, computed under the workspace's lock; SQL leaves and the sum come after. */
export interface ColumnPhase {
  domain: Domain;
  leaves: Map<CountPlan, Bitset>;
  /** The people a split leaf left in doubt (its SQL condition decides them), by leaf; only leaves with any. */
  doubts: Map<CountPlan, Bitset>;
  slots: number;
  /** Each slot's person_no, as of this phase: slots are only ever added, and a rebuild starts a new list. */
  personNos: Int32Array;
  /** How many slots, from the first, hold increasing person numbers (SlotIndex). */
  orderedSlots: number;
  /** The version the leaves were read at (even: nothing was changing). */
  version: number;
  /** The plan's key among the counts kept for reuse (see reuseKey); none when a leaf is SQL's. */
  resultKey?: string;
  /** The whole count, when one of the same plan was made at this version (see remember). */
  reused?: CountResult;
  /** How many of the leaves were results kept from an earlier count at this version. */
  leavesReused: number;
}

/** A count's matches, and what its pages are read with, made once and kept while the counts stay at its version. */
export interface CountResult {
  matched: Bitset;
  total: number;
  bitmap?: MemberBitmap;
  personNos?: Int32Array;
}

/** Leaf results and whole counts kept per workspace for reuse at one version: about 8 MB and 10 MB at 1,000,000 people. */
const LEAVES_KEPT = 64;
const RESULTS_KEPT = 16;

const xid = (text: string) => BigInt(text);

/** What the first statement of a count's transaction finds (see WorkspaceCounts.probe). */
export interface Probe {
  xmin: string;
  pruned: string | null;
  /** The people of changes since the watermark that the counts do not hold yet. */
  changed: string[];
  /** Every change visible in the snapshot at or above its xmin (`xid:change_no`), up to CATCH_UP_LIMIT + 1. */
  recent: string[];
}

/** The participants of one study that the counts hold, each at a row, by their person's slot. */
class StudyRows {
  rows = 0;
  personSlot = new Int32Array(0);
  readonly rowOf = new Map<number, number>();
  readonly columns = new Map<string, HeldColumn>();
  lastUsed = 0;

  rowFor(slot: number): number {
    let row = this.rowOf.get(slot);
    if (row === undefined) {
      row = this.rows++;
      if (this.personSlot.length < this.rows) {
        const larger = new Int32Array(Math.max(this.rows, this.personSlot.length * 2, 64));
        larger.set(this.personSlot);
        this.personSlot = larger;
      }
      this.personSlot[row] = slot;
      this.rowOf.set(slot, row);
      for (const held of this.columns.values()) held.column.grow(this.rows);
    }
    return row;
  }

  remove(slot: number): void {
    const row = this.rowOf.get(slot);
    if (row === undefined) return;
    this.personSlot[row] = -1;
    this.rowOf.delete(slot);
  }
}

/**
 * One workspace's search counts: every person (live or deleted) at a slot, the columns searches
 * have named, and the participants of the studies searched. They are derived from the database
 * alone and describe it as of one snapshot: `watermark` is that snapshot's xmin, below which every
 * transaction has ended and every change has been applied. All work on them runs under `exclusive`.
 */
export class WorkspaceCounts {
  watermark: string | undefined;
  /**
   * How far the log had been pruned when the counts were last brought up to date. A prune since
   * then that reached the watermark may have taken changes not applied here: a rebuild follows.
   * (Comparing with the watermark alone would rebuild again and again while a long transaction
   * anywhere holds xmin back.)
   */
  private prunedSeen: string | null = null;
  /**
   * The changes at or above the watermark that the counts already hold (`xid:change_no`): those
   * of transactions that had committed by the snapshot the counts were brought to, though younger
   * than its xmin. A probe leaves them out, so under a steady stream of writes (xmin always just
   * behind) a count finds nothing new and reads without the lock, instead of applying the same
   * changes again under it for every search.
   */
  private applied: string[] = [];
  /** Person numbers to slots and back (see slot-index.ts). */
  private readonly slotIndex = new SlotIndex();
  lastUsed = 0;
  /** Set when catching up would mean a rebuild: searches answer with SQL until a preparation rebuilds. */
  stale = false;
  /** Counts up with every change to what is held: a domain computed at one version serves every count at it. */
  private version_ = 0;
  private changes = 0;
  private readonly domains = new Map<string, { version: number; domain: Domain }>();
  /**
   * Column-leaf results and whole counts of the version `reusableAt`, by study and key, least
   * recently used first: a search made again (its next page, the same filter refreshed) or one
   * sharing a leaf with another costs only what changed since. They are kept for one version
   * only: every change to what is held moves the version and drops them all, so none is ever
   * stale (the way a search engine keeps filter results per index refresh).
   */
  private reusableAt = -1;
  private readonly reusedLeaves = new Map<string, { certain: Bitset; doubtful?: Bitset }>();
  private readonly reusedResults = new Map<string, CountResult>();
  private live = new Uint32Array(0);
  private readonly personColumns = new Map<string, HeldColumn>();
  readonly studies = new Map<string, StudyRows>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly workspaceId: string) {}

  /** Runs `work` after every earlier piece of work on this workspace has ended. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * A sequence lock: odd while what is held is being changed (a catch-up applying changes, a load,
   * a rebuild), counted up at the start and the end of each change. A lock-free count that reads
   * the same even version before its probe and after it read counts that did not move meanwhile.
   */
  get version(): number {
    return this.version_;
  }

  get busy(): boolean {
    return (this.version_ & 1) === 1;
  }

  private async changing<T>(work: () => Promise<T>): Promise<T> {
    if (this.changes++ === 0) this.version_++;
    try {
      return await work();
    } finally {
      if (--this.changes === 0) this.version_++;
    }
  }

  /**
   * Whether the counts are exactly at the snapshot a probe was read in: nothing logged since the
   * watermark is visible in it, nothing was pruned that matters. A count can then be read without
   * the lock, provided the counts did not move between the probe and the reading (see index.ts).
   */
  isAt(probe: Probe): boolean {
    return this.watermark !== undefined && !this.stale && probe.changed.length === 0 && !this.lostIn(probe);
  }

  private lostIn(probe: Probe): boolean {
    return probe.pruned !== null && probe.pruned !== this.prunedSeen && xid(probe.pruned) >= xid(this.watermark!);
  }

  /**
   * The first statement of a count's transaction: its snapshot's xmin, the log's prune horizon,
   * who changed since the watermark (leaving out the changes already applied), and the changes
   * that will count as applied once the counts are at this snapshot.
   */
  async probe(transaction: Kysely<DB>): Promise<Probe> {
    const { rows } = await sql<Probe>`
      select cast(pg_snapshot_xmin(pg_current_snapshot()) as text) as xmin,
        (select cast(h.pruned_through as text) from search_change_horizons as h where h.workspace_id = ${this.workspaceId}) as pruned,
        array(select distinct changed.person_id
          from search_changes as c, unnest(c.person_ids) as changed(person_id)
          where c.workspace_id = ${this.workspaceId} and c.changed_xid >= cast(${this.watermark ?? '0'} as xid8)
            and not (cast(c.changed_xid as text) || ':' || c.change_no = any (${this.applied}::text[]))
          limit ${sql.lit(CATCH_UP_LIMIT + 1)}) as changed,
        array(select cast(c.changed_xid as text) || ':' || c.change_no
          from search_changes as c
          where c.workspace_id = ${this.workspaceId} and c.changed_xid >= pg_snapshot_xmin(pg_current_snapshot())
          limit ${sql.lit(CATCH_UP_LIMIT + 1)}) as recent
    `.execute(transaction);
    return rows[0]!;
  }

  /** After the counts reached the probe's snapshot: what they hold above its xmin (none, when too many to list). */
  private holdThrough(probe: Probe): void {
    this.watermark = probe.xmin;
    this.prunedSeen = probe.pruned;
    this.applied = probe.recent.length > CATCH_UP_LIMIT ? [] : probe.recent;
  }

  /** A person column a sort can be bounded by (index.ts, boundedPersonNos), by its key: numbers, date-times or texts in byte order, every value exact. */
  heldSortColumn(key: string): Column | undefined {
    return sortable(this.personColumns.get(key));
  }

  /** A study's participant column a sort can be bounded by, by its key, as heldSortColumn; indexed by the study's rows. */
  heldStudySortColumn(studyId: string, key: string): Column | undefined {
    return sortable(this.studies.get(studyId)?.columns.get(key));
  }

  /** Whether a column is held (exact or not), a person's or, given a study, its participants': a column not held yet is loaded by a preparation. */
  holds(key: string, studyId?: string): boolean {
    return studyId === undefined ? this.personColumns.has(key) : this.studies.get(studyId)?.columns.has(key) === true;
  }

  /**
   * Whether a count with these needs can be answered now: `missing` when something must be loaded
   * first, `inexact` when a held column cannot compare exactly (SQL counts instead, until a rebuild).
   */
  state(needs: CountNeeds): 'ready' | 'missing' | 'inexact' {
    const study = needs.studyId === undefined ? undefined : this.studies.get(needs.studyId);
    const people = needs.personColumns.map((spec) => this.personColumns.get(spec.key));
    const participants = needs.participantColumns.map((spec) => study?.columns.get(spec.key));
    if ([...people, ...participants].some((held) => held?.column.exact === false)) return 'inexact';
    if (this.watermark === undefined || this.stale || (needs.studyId !== undefined && !study)) return 'missing';
    return [...people, ...participants].every((held) => held !== undefined) ? 'ready' : 'missing';
  }

  /**
   * Brings the counts to the snapshot of `transaction` (repeatable read; this must be its first
   * statement): re-reads the people logged as changed since the watermark. Returns false, leaving
   * the counts `stale`, when that would take a rebuild and `mayRebuild` is false.
   */
  async catchUp(transaction: Kysely<DB>, mayRebuild: boolean): Promise<boolean> {
    if (this.watermark === undefined) {
      if (!mayRebuild) return false;
      const { xmin, pruned } = await snapshotOf(transaction, this.workspaceId);
      await this.rebuild(transaction, xmin, pruned);
      // The rebuild's snapshot had no probe: nothing counts as applied above its xmin (applying it again is harmless).
      this.applied = [];
      return true;
    }
    return this.settle(transaction, await this.probe(transaction), mayRebuild);
  }

  /** Applies what a probe found (or rebuilds, when that is the cheaper or the only way). */
  async settle(transaction: Kysely<DB>, probe: Probe, mayRebuild: boolean): Promise<boolean> {
    const { xmin, pruned, changed } = probe;
    const tooMany = changed.length > CATCH_UP_LIMIT;
    const lost = this.lostIn(probe);
    if (this.stale || tooMany || lost || !(changed.length === 0 || (await this.apply(transaction, changed)))) {
      if (!mayRebuild) {
        this.stale = true;
        return false;
      }
      await this.rebuild(transaction, xmin, pruned);
      this.holdThrough(probe);
      return true;
    }
    this.holdThrough(probe);
    return true;
  }

  /** Loads what `needs` names and is not held yet, in the snapshot the counts are at. */
  async ensure(transaction: Kysely<DB>, needs: CountNeeds): Promise<void> {
    const people = needs.personColumns.filter((spec) => !this.personColumns.has(spec.key));
    if (people.length > 0) await this.loadPeople(transaction, people);
    if (needs.studyId !== undefined) {
      let study = this.studies.get(needs.studyId);
      const columns = needs.participantColumns.filter((spec) => !study?.columns.has(spec.key));
      if (!study || columns.length > 0) {
        study ??= new StudyRows();
        this.studies.set(needs.studyId, study);
        await this.loadStudy(transaction, needs.studyId, study, columns);
      }
    }
  }

  private rebuild(transaction: Kysely<DB>, xmin: string, pruned: string | null): Promise<void> {
    return this.changing(() => this.rebuildChanging(transaction, xmin, pruned));
  }

  private async rebuildChanging(transaction: Kysely<DB>, xmin: string, pruned: string | null): Promise<void> {
    const personSpecs = [...this.personColumns.values()].map((held) => held.spec);
    const studies = [...this.studies.entries()].map(([studyId, study]) => ({ studyId, specs: [...study.columns.values()].map((held) => held.spec) }));
    this.slotIndex.clear();
    this.live = new Uint32Array(0);
    this.personColumns.clear();
    this.studies.clear();
    await this.loadPeople(transaction, personSpecs, true);
    for (const { studyId, specs } of studies) {
      const study = new StudyRows();
      this.studies.set(studyId, study);
      await this.loadStudy(transaction, studyId, study, specs);
    }
    this.watermark = xmin;
    this.prunedSeen = pruned;
    this.stale = false;
  }

  /** How many people (slots) are held. */
  get slots(): number {
    return this.slotIndex.slots;
  }

  private slotFor(personNo: number): number {
    const { slot, added } = this.slotIndex.slotFor(personNo);
    if (added) {
      if (this.live.length < wordsFor(this.slots)) {
        const larger = new Uint32Array(Math.max(wordsFor(this.slots), this.live.length * 2, 64));
        larger.set(this.live);
        this.live = larger;
      }
      for (const held of this.personColumns.values()) held.column.grow(this.slots);
    }
    return slot;
  }

  private setLive(slot: number, live: boolean): void {
    if (live) this.live[slot >>> 5]! |= 1 << (slot & 31);
    else this.live[slot >>> 5]! &= ~(1 << (slot & 31));
  }

  private isLive(slot: number): boolean {
    return (this.live[slot >>> 5]! & (1 << (slot & 31))) !== 0;
  }

  /** Reads people in person_no order, a batch at a time: every person when `everyone`, else the given columns of people held. */
  private loadPeople(transaction: Kysely<DB>, specs: ColumnSpec[], everyone = false): Promise<void> {
    return this.changing(() => this.loadPeopleChanging(transaction, specs, everyone));
  }

  private async loadPeopleChanging(transaction: Kysely<DB>, specs: ColumnSpec[], everyone = false): Promise<void> {
    const held = await heldColumns(transaction, specs);
    for (const { column } of held) column.grow(this.slots);
    let after = -1;
    for (;;) {
      const { rows } = await sql<Record<string, unknown> & { person_no: number; live: boolean }>`
        select p.person_no, (p.deleted_at is null) as live ${selected(held.map((entry) => entry.spec))}
        from people as p
        where p.workspace_id = ${this.workspaceId} and p.person_no > ${after}
        order by p.person_no
        limit ${sql.lit(LOAD_BATCH)}
      `.execute(transaction);
      for (const row of rows) {
        const slot = everyone ? this.slotFor(row.person_no) : this.slotIndex.get(row.person_no);
        if (slot === undefined) continue;
        if (everyone) this.setLive(slot, row.live);
        held.forEach(({ column }, index) => {
          column.grow(this.slots);
          column.set(slot, row[`c${index}`]);
        });
      }
      if (rows.length < LOAD_BATCH) break;
      after = rows.at(-1)!.person_no;
    }
    for (const entry of held) this.personColumns.set(entry.spec.key, entry);
  }

  /** Reads a study's participants (all of them when the study is new here) with the given columns. */
  private loadStudy(transaction: Kysely<DB>, studyId: string, study: StudyRows, specs: ColumnSpec[]): Promise<void> {
    return this.changing(() => this.loadStudyChanging(transaction, studyId, study, specs));
  }

  private async loadStudyChanging(transaction: Kysely<DB>, studyId: string, study: StudyRows, specs: ColumnSpec[]): Promise<void> {
    const held = await heldColumns(transaction, specs);
    for (const { column } of held) column.grow(study.rows);
    let after = '';
    for (;;) {
      const { rows } = await sql<Record<string, unknown> & { person_no: number; person_id: string }>`
        select pt.person_id, p.person_no ${selected(held.map((entry) => entry.spec))}
        from participants as pt
          join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
        where pt.workspace_id = ${this.workspaceId} and pt.study_id = ${studyId} and pt.person_id > ${after}
        order by pt.person_id
        limit ${sql.lit(LOAD_BATCH)}
      `.execute(transaction);
      for (const row of rows) {
        const slot = this.slotFor(row.person_no);
        const position = study.rowFor(slot);
        held.forEach(({ column }, index) => {
          column.grow(study.rows);
          column.set(position, row[`c${index}`]);
        });
      }
      if (rows.length < LOAD_BATCH) break;
      after = rows.at(-1)!.person_id;
    }
    for (const entry of held) study.columns.set(entry.spec.key, entry);
  }

  /** Re-reads the changed people's rows and their participants in the studies held; false when one has vanished. */
  private apply(transaction: Kysely<DB>, personIds: string[]): Promise<boolean> {
    return this.changing(() => this.applyChanging(transaction, personIds));
  }

  private async applyChanging(transaction: Kysely<DB>, personIds: string[]): Promise<boolean> {
    const people = [...this.personColumns.values()];
    const { rows } = await sql<Record<string, unknown> & { person_no: number; live: boolean }>`
      select p.person_no, (p.deleted_at is null) as live ${selected(people.map((entry) => entry.spec))}
      from people as p
      where p.workspace_id = ${this.workspaceId} and p.person_id = any(cast(${personIds} as text[]))
    `.execute(transaction);
    // People rows are never deleted (a purge erases their data and keeps the row); one that was cannot be found by its id here.
    if (rows.length < personIds.length) return false;
    const changedSlots: number[] = [];
    for (const row of rows) {
      const slot = this.slotFor(row.person_no);
      changedSlots.push(slot);
      this.setLive(slot, row.live);
      people.forEach(({ column }, index) => column.set(slot, row[`c${index}`]));
    }
    for (const [studyId, study] of this.studies) {
      const held = [...study.columns.values()];
      const { rows: participants } = await sql<Record<string, unknown> & { person_no: number }>`
        select p.person_no ${selected(held.map((entry) => entry.spec))}
        from participants as pt
          join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
        where pt.workspace_id = ${this.workspaceId} and pt.study_id = ${studyId} and pt.person_id = any(cast(${personIds} as text[]))
      `.execute(transaction);
      const present = new Set<number>();
      for (const row of participants) {
        const slot = this.slotFor(row.person_no);
        present.add(slot);
        const position = study.rowFor(slot);
        held.forEach(({ column }, index) => column.set(position, row[`c${index}`]));
      }
      for (const slot of changedSlots) if (!present.has(slot)) study.remove(slot);
    }
    return true;
  }

  /**
   * The first half of a count, synchronous so that no catch-up can run in between: the rows the
   * count ranges over (the live people, or the study's participants whose person is live), and
   * each column leaf's matches among them.
   */
  evaluateColumns(plan: CountPlan, studyId: string | undefined): ColumnPhase {
    const domain = this.domain(studyId);
    const study = studyId === undefined ? undefined : this.studies.get(studyId)!;
    if (study) study.lastUsed = Date.now();
    const version = this.version_;
    const within = `${studyId ?? ''}\u0000`;
    const plannedKey = reuseKey(plan);
    const resultKey = plannedKey === undefined ? undefined : within + plannedKey;
    const phase = { domain, slots: this.slots, personNos: this.slotIndex.personNoOf, orderedSlots: this.slotIndex.orderedSlots, version, ...(resultKey === undefined ? {} : { resultKey }) };
    this.reuseAt(version);
    const reused = resultKey === undefined ? undefined : lastUsed(this.reusedResults, resultKey);
    if (reused) return { ...phase, leaves: new Map(), doubts: new Map(), reused, leavesReused: 0 };
    const leaves = new Map<CountPlan, Bitset>();
    const doubts = new Map<CountPlan, Bitset>();
    let leavesReused = 0;
    const visit = (node: CountPlan) => {
      if (node.kind === 'and' || node.kind === 'or') node.items.forEach(visit);
      else if (node.kind === 'not') visit(node.item);
      else if (node.kind === 'column' || node.kind === 'split') {
        const key = within + leafKey(node);
        const kept = lastUsed(this.reusedLeaves, key);
        if (kept) {
          leaves.set(node, kept.certain);
          if (kept.doubtful) doubts.set(node, kept.doubtful);
          leavesReused++;
          return;
        }
        visitLeaf(node);
        keep(this.reusedLeaves, key, { certain: leaves.get(node)!, ...(doubts.has(node) ? { doubtful: doubts.get(node)! } : {}) }, LEAVES_KEPT);
      }
    };
    const visitLeaf = (node: Extract<CountPlan, { kind: 'column' | 'split' }>) => {
      if (node.kind === 'split') {
        const held = this.personColumns.get(node.column.key)!;
        const whole = domain.slots.length * 4 >= this.slots;
        const { certain, doubtful } = node.split(held.column, whole ? undefined : domain.slots, this.slots);
        leaves.set(node, certain);
        if (doubtful.count() > 0) doubts.set(node, doubtful);
      } else if (node.kind === 'column') {
        const held = node.column.source === 'person' ? this.personColumns.get(node.column.key)! : study!.columns.get(node.column.key)!;
        // A person's column is indexed by slot, as the result is: it is answered for every slot at
        // once, word-wide from value bitsets, or in one pass over all values in slot order, even for
        // a study's participants (a tenth of the people, in no slot order): reading a million
        // values in order took less than reading a hundred thousand of them scattered (E1's count
        // of a number range at 1,000,000 people: 15 ms a search scattered). The count keeps only
        // the rows counted (the domain) in the end.
        if (node.column.source === 'person') {
          const wordWide = node.bits?.(held.column, this.slots);
          if (wordWide) {
            leaves.set(node, wordWide);
            return;
          }
          const matches = node.test(held.column);
          const bits = Bitset.empty(this.slots);
          for (let slot = 0; slot < this.slots; slot++) if (matches(slot)) bits.add(slot);
          leaves.set(node, bits);
          return;
        }
        // A study's column is indexed by row: answered word-wide by row when it can be, then each
        // matching row marks its person's slot (rows outside the domain are dropped by the count's
        // final AND with it); else tested row by row over the domain.
        const byRow = node.bits?.(held.column, study!.rows);
        if (byRow) {
          leaves.set(node, slotsOfRows(byRow, study!.personSlot, study!.rows, this.slots));
          return;
        }
        const matches = node.test(held.column);
        const bits = Bitset.empty(this.slots);
        for (let i = 0; i < domain.rows.length; i++) if (matches(domain.rows[i]!)) bits.add(domain.slots[i]!);
        leaves.set(node, bits);
      }
    };
    visit(plan);
    return { ...phase, leaves, doubts, leavesReused };
  }

  /**
   * Keeps a count's result for the next count of the same plan over the same rows, provided the
   * counts are still at the version its leaves were read at. Not one a split leaf's doubtful
   * people were decided in: SQL decided them.
   */
  remember(phase: ColumnPhase, result: CountResult): void {
    if (phase.resultKey === undefined || phase.doubts.size > 0 || phase.version !== this.version_ || this.busy) return;
    this.reuseAt(phase.version);
    keep(this.reusedResults, phase.resultKey, result, RESULTS_KEPT);
  }

  /** Drops what was kept for reuse at another version. */
  private reuseAt(version: number): void {
    if (this.reusableAt === version) return;
    this.reusedLeaves.clear();
    this.reusedResults.clear();
    // Only an even version is one nothing was changing at: while odd, nothing is kept.
    this.reusableAt = (version & 1) === 0 ? version : -1;
  }

  private domain(studyId: string | undefined): Domain {
    const cached = this.domains.get(studyId ?? '');
    if (cached?.version === this.version_) return cached.domain;
    const domain = this.computeDomain(studyId);
    this.domains.set(studyId ?? '', { version: this.version_, domain });
    return domain;
  }

  private computeDomain(studyId: string | undefined): Domain {
    const bits = Bitset.empty(this.slots);
    if (studyId === undefined) {
      const slots = new Int32Array(this.slots);
      let count = 0;
      for (let slot = 0; slot < this.slots; slot++) {
        if (!this.isLive(slot)) continue;
        slots[count++] = slot;
        bits.add(slot);
      }
      const live = slots.subarray(0, count);
      return { slots: live, rows: live, bits };
    }
    const study = this.studies.get(studyId)!;
    const slots = new Int32Array(study.rows);
    const rows = new Int32Array(study.rows);
    let count = 0;
    for (let row = 0; row < study.rows; row++) {
      const slot = study.personSlot[row]!;
      if (slot < 0 || !this.isLive(slot)) continue;
      slots[count] = slot;
      rows[count++] = row;
      bits.add(slot);
    }
    return { slots: slots.subarray(0, count), rows: rows.subarray(0, count), bits };
  }

  /** The slots of the people a SQL leaf returned (by person_no); every one of them is held, being in the same snapshot. */
  bitsOf(personNos: number[], slots: number): Bitset {
    const bits = Bitset.empty(Math.max(slots, this.slots));
    this.slotIndex.forEachSlot(personNos, (slot) => bits.add(slot));
    return bits;
  }

  /** Forgets the least recently used studies beyond `keep`. */
  trimStudies(keep: number): void {
    if (this.studies.size <= keep) return;
    const byAge = [...this.studies.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [studyId] of byAge.slice(0, this.studies.size - keep)) {
      this.studies.delete(studyId);
      this.domains.delete(studyId);
    }
  }
}

/** The entry at `key`, made the most recently used. */
function lastUsed<T>(entries: Map<string, T>, key: string): T | undefined {
  const entry = entries.get(key);
  if (entry === undefined) return undefined;
  entries.delete(key);
  entries.set(key, entry);
  return entry;
}

/** Keeps `entry` at `key`, dropping the least recently used beyond `most`. */
function keep<T>(entries: Map<string, T>, key: string, entry: T, most: number): void {
  entries.delete(key);
  entries.set(key, entry);
  while (entries.size > most) entries.delete(entries.keys().next().value!);
}

/** A held column a page's bound can read: numbers, date-times or texts in byte order, every value exact. */
function sortable(held: HeldColumn | undefined): Column | undefined {
  if (!held?.column.exact) return undefined;
  const { kind } = held.spec;
  return kind === 'number' || kind === 'micros' || (kind === 'haystack' && held.column.bytewiseOrder) ? held.column : undefined;
}

/** The slots of the people whose rows are in `rows` below `rowCount` (rows without a person, slot -1, are skipped). */
function slotsOfRows(rows: Bitset, personSlot: Int32Array, rowCount: number, slots: number): Bitset {
  const bits = Bitset.empty(slots);
  const { words } = rows;
  const end = Math.min(words.length, wordsFor(rowCount));
  for (let index = 0; index < end; index++) {
    let word = words[index]!;
    while (word !== 0) {
      const lowest = word & -word;
      const row = (index << 5) + (31 - Math.clz32(lowest));
      const slot = row < rowCount ? personSlot[row]! : -1;
      if (slot >= 0) bits.add(slot);
      word = (word ^ lowest) >>> 0;
    }
  }
  return bits;
}

/** The snapshot's xmin and how far the workspace's log was pruned in it: the first statement of a build. */
async function snapshotOf(transaction: Kysely<DB>, workspaceId: string): Promise<{ xmin: string; pruned: string | null }> {
  const { rows } = await sql<{ xmin: string; pruned: string | null }>`
    select cast(pg_snapshot_xmin(pg_current_snapshot()) as text) as xmin,
      (select cast(h.pruned_through as text) from search_change_horizons as h where h.workspace_id = ${workspaceId}) as pruned
  `.execute(transaction);
  return rows[0]!;
}

/** `, <read expression> as c0, …` for the columns of a load. */
const UPPER_ASCII = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * New columns for these specs. A column of lowered values is exact only where the database lowers
 * ASCII letters as JavaScript does (a Turkish locale lowers I to a dotless i), asked once per load.
 */
async function heldColumns(transaction: Kysely<DB>, specs: ColumnSpec[]): Promise<HeldColumn[]> {
  const held = specs.map((spec) => ({ spec, column: new Column(spec.kind) }));
  if (held.some(({ spec }) => spec.lowered)) {
    const { rows } = await sql<{ folded: string }>`select lower(cast(${UPPER_ASCII} as text)) as folded`.execute(transaction);
    const foldsAsJavaScript = rows[0]!.folded === UPPER_ASCII.toLowerCase();
    // C and POSIX compare bytes; glibc's C.UTF-8 compares code points, which is the order of UTF-8's bytes.
    const { rows: collations } = await sql<{ bytewise: boolean }>`
      select d.datlocprovider = 'c' and d.datcollate in ('C', 'POSIX', 'C.UTF-8', 'C.utf8') as bytewise
      from pg_database as d where d.datname = current_database()`.execute(transaction);
    const bytewise = collations[0]?.bytewise === true;
    for (const { spec, column } of held) {
      if (!spec.lowered) continue;
      column.exact = foldsAsJavaScript;
      column.bytewiseOrder = bytewise;
    }
  }
  return held;
}

function selected(specs: ColumnSpec[]): RawBuilder<unknown> {
  if (specs.length === 0) return sql``;
  return sql`, ${sql.join(specs.map((spec, index) => sql`${readExpression(spec.kind, spec.value)} as ${sql.raw(`c${index}`)}`))}`;
}
