import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as bidiModule from 'bidi-js';
import type { Bidi } from 'bidi-js';
import PDFDocument from 'pdfkit';
import { markdownBlocks } from './markdown.js';

/** The version signed, as the consent-forms family answers it (a ConsentFormVersion has these fields). */
export interface SignedVersion {
  consentFormId: string;
  version: number;
  title: string;
  body: string;
  language: string;
  contentSha256: string;
  requiredStatements: { id: string; text: string }[];
  optionalChoices: { id: string; text: string }[];
}

/** The words around the form's own text, in the form's language: the pages' i18n gives them; English by default. */
export interface SignedCopyLabels {
  statements: string;
  choices: string;
  agreed: string;
  declined: string;
  signedBy: string;
  signedAt: string;
  version: string;
  contentHash: string;
}

export const englishLabels: SignedCopyLabels = {
  statements: 'You agreed to',
  choices: 'Your choices',
  agreed: 'Yes',
  declined: 'No',
  signedBy: 'Signed by',
  signedAt: 'Signed at',
  version: 'Version',
  contentHash: 'SHA-256 of the form',
};

export interface SignedCopy {
  form: SignedVersion;
  /** The full name the person typed. */
  fullName: string;
  /** The ids of the required statements ticked: every one, or the form was not signed. */
  statementIds: string[];
  /** Each optional choice's answer by id; a choice left out counts as declined. */
  choices: Record<string, boolean>;
  signedAt: Date;
  /** A BCP 47 locale and an IANA time zone for the time, through Intl (e.g. `de-DE`, `Europe/Berlin`). */
  locale: string;
  timeZone: string;
  labels?: SignedCopyLabels;
}

export interface SignedCopyOptions {
  /** Content streams uncompressed: for tests that read the file. */
  compress?: boolean;
  /** Where the font is looked for: tests give a path that does not exist to see the fallback. */
  fontPath?: string;
}

const rightToLeft = new Set(['ar', 'fa', 'he', 'ur', 'ps', 'yi', 'dv', 'ckb', 'sd', 'ug']);
export const isRightToLeft = (language: string) => rightToLeft.has(language.split('-')[0]!.toLowerCase());

/**
 * DejaVu Sans (the `dejavu-fonts-ttf` package) has Latin, Greek, Cyrillic, Hebrew and Arabic
 * glyphs, and fontkit (pdfkit's font engine) shapes Arabic and lays a right-to-left line out
 * right to left. Without it, the PDF falls back to Helvetica, one of the 14 standard PDF fonts,
 * which holds only Windows-1252: every other character is written as "?", so the copy still says
 * who signed which version when, and its hash still names the exact text.
 */
function defaultFontPath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
  } catch {
    return undefined;
  }
}

/** Windows-1252's printable characters beyond ASCII, which the standard fonts can show. */
const winAnsiExtra = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
const toWinAnsi = (text: string) => [...text].map((char) => (char === '\n' || (char >= ' ' && char <= '~') || (char >= '\u00a0' && char <= '\u00ff') || winAnsiExtra.has(char) ? char : '?')).join('');

type Direction = 'ltr' | 'rtl';
// bidi-js is CommonJS whose module.exports is the factory; its types declare it as the default export.
const bidi = (bidiModule as unknown as { default: () => Bidi }).default();

/** Scripts fontkit lays out right to left by itself: it reverses a run whose first letter or digit is of one of them. */
const rightToLeftScript = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const firstStrong = /[^\p{Script=Common}\p{Script=Inherited}\s]/u;
const reversed = (text: string) => [...text].reverse().join('');

/**
 * One line of text in visual order (left to right), as runs of one direction each, by the Unicode
 * Bidirectional Algorithm (bidi-js): the levels of the line's characters in a paragraph of
 * direction `base`, runs of one level, and rule L2 (reverse every sequence at level n or above,
 * from the highest level down to the lowest odd one). Each run's text is given as fontkit must
 * receive it to draw it in that order: fontkit shapes a run (Arabic letters join by their logical
 * neighbours) and reverses it when its first letter is of a right-to-left script, so a run whose
 * wanted order differs from what fontkit will do (digits in a right-to-left line, punctuation
 * alone at an odd level) is reversed here first, and an odd level's brackets are mirrored.
 */
export function visualRuns(line: string, base: Direction): { text: string; rtl: boolean }[] {
  const { levels } = bidi.getEmbeddingLevels(line, base);
  const runs: { text: string; level: number }[] = [];
  for (let index = 0; index < line.length; index++) {
    const level = levels[index]!;
    const last = runs.at(-1);
    if (last && last.level === level) last.text += line[index];
    else runs.push({ text: line[index]!, level });
  }
  const highest = Math.max(0, ...runs.map((run) => run.level));
  const lowestOdd = Math.min(...runs.map((run) => (run.level % 2 === 1 ? run.level : Infinity)));
  for (let level = highest; level >= lowestOdd && level > 0; level--) {
    for (let start = 0; start < runs.length; start++) {
      if (runs[start]!.level < level) continue;
      let end = start;
      while (end + 1 < runs.length && runs[end + 1]!.level >= level) end++;
      runs.splice(start, end - start + 1, ...runs.slice(start, end + 1).reverse());
      start = end;
    }
  }
  return runs.map((run) => {
    const rtl = run.level % 2 === 1;
    const text = rtl ? [...run.text].map((char) => bidi.getMirroredCharacter(char) ?? char).join('') : run.text;
    const fontkitReverses = rightToLeftScript.test(text.match(firstStrong)?.[0] ?? '');
    return { text: fontkitReverses === rtl ? text : reversed(text), rtl };
  });
}

/**
 * The person's signed copy of a consent form as a PDF: the form's title and text (its Markdown's
 * headings, paragraphs and lists), the statements they ticked, their choices, their typed name,
 * the time in their locale and time zone, and the version and its hash. Pure: the same input
 * gives the same bytes (the file's dates are the signing time, not the clock).
 *
 * Tagged for screen readers (PDF/UA-style structure: Document, H1–H6, P, L/LI/LBody), with
 * the document's language (`/Lang`) and title (`/Title`, shown as the window title).
 */
export async function signedCopyPdf(copy: SignedCopy, options: SignedCopyOptions = {}): Promise<Buffer> {
  const labels = copy.labels ?? englishLabels;
  const { form } = copy;
  const fontPath = options.fontPath ?? defaultFontPath();
  const embedded = fontPath !== undefined && existsSync(fontPath);
  const boldPath = embedded ? fontPath.replace(/DejaVuSans\.ttf$/, 'DejaVuSans-Bold.ttf') : undefined;
  const clean = embedded ? (value: string) => value : toWinAnsi;
  const base: Direction = isRightToLeft(form.language) ? 'rtl' : 'ltr';
  // With features given, pdfkit lays a run out whole (fontkit shapes and orders it); without,
  // word by word, which puts the words of a right-to-left run in left-to-right order.
  const features = embedded ? (['kern'] as PDFKit.Mixins.OpenTypeFeatures[]) : undefined;

  const doc = new PDFDocument({
    size: 'A4',
    margin: 56,
    compress: options.compress ?? true,
    pdfVersion: '1.7',
    tagged: true,
    lang: form.language,
    displayTitle: true,
    info: { Title: clean(form.title), Subject: `${form.consentFormId} v${form.version}`, Creator: 'recruit-ops', CreationDate: copy.signedAt, ModDate: copy.signedAt },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const regular = embedded ? 'Body' : 'Helvetica';
  const bold = embedded ? 'Bold' : 'Helvetica-Bold';
  if (embedded) {
    doc.registerFont('Body', fontPath);
    doc.registerFont('Bold', boldPath !== undefined && existsSync(boldPath) ? boldPath : fontPath);
  }
  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const measure = (value: string) => doc.widthOfString(value, features ? { features } : {});

  /** Breaks text into lines of at most `room` points at spaces (a word longer than a line is cut). */
  const lines = (value: string, room: number): string[] => {
    const result: string[] = [];
    for (const paragraph of value.split('\n')) {
      let line = '';
      for (let word of paragraph.split(/ +/)) {
        while (measure(word) > room && [...word].length > 1) {
          let cut = [...word].length - 1;
          while (cut > 1 && measure([...word].slice(0, cut).join('')) > room) cut--;
          if (line) result.push(line);
          result.push([...word].slice(0, cut).join(''));
          line = '';
          word = [...word].slice(cut).join('');
        }
        const candidate = line ? `${line} ${word}` : word;
        if (line && measure(candidate) > room) {
          result.push(line);
          line = word;
        } else line = candidate;
      }
      result.push(line);
    }
    return result;
  };

  /**
   * Writes text in the form's direction, each line placed by hand: its runs in visual order from
   * the start edge (the left for a left-to-right form, the right for a right-to-left one).
   */
  const write = (value: string, font: string, size: number, indent = 0) => {
    doc.font(font).fontSize(size);
    const room = width - indent;
    for (const line of lines(clean(value), room)) {
      const height = doc.currentLineHeight(true);
      if (doc.y + height > doc.page.height - doc.page.margins.bottom) doc.addPage();
      const y = doc.y;
      const runs = visualRuns(line, base);
      const lineWidth = runs.reduce((sum, run) => sum + measure(run.text), 0);
      let x = base === 'rtl' ? left + room - lineWidth : left + indent;
      for (const run of runs) {
        doc.text(run.text, x, y, { lineBreak: false, ...(features ? { features } : {}) });
        x += measure(run.text);
      }
      doc.x = left;
      doc.y = y + height;
    }
  };

  const root = doc.struct('Document');
  doc.addStructure(root);
  const block = (tag: string, draw: () => void) => root.add(doc.struct(tag, {}, () => draw()));
  const paragraph = (value: string, font = regular, size = 11, gap = 0.5) =>
    block('P', () => {
      write(value, font, size);
      doc.moveDown(gap);
    });
  const heading = (level: number, value: string) =>
    block(`H${Math.min(level, 6)}`, () => {
      write(value, bold, Math.max(20 - 2 * level, 12));
      doc.moveDown(0.4);
    });
  /**
   * A list of items, each drawn as one line with its marker (a tick box, a bullet, a number) at the
   * start edge: the marker is read with the item's text, in its body (a separate label would need
   * the two drawn apart, which a right-to-left line's ordering does not allow).
   */
  const list = (items: { label: string; body: string; depth?: number }[]) => {
    const element = doc.struct('L');
    root.add(element);
    for (const item of items) {
      const entry = doc.struct('LI');
      element.add(entry);
      entry.add(
        doc.struct('LBody', {}, () => {
          write(`${item.label} ${item.body}`, regular, 11, 14 * (item.depth ?? 0));
          doc.moveDown(0.3);
        }),
      );
      entry.end();
    }
    element.end();
  };

  heading(1, form.title);
  let pendingList: { label: string; body: string; depth?: number }[] = [];
  const flushList = () => {
    if (pendingList.length > 0) list(pendingList);
    pendingList = [];
  };
  for (const part of await markdownBlocks(form.body)) {
    if (part.kind === 'listItem') {
      pendingList.push({ label: part.ordinal || '•', body: part.text, depth: part.depth - 1 });
      continue;
    }
    flushList();
    if (part.kind === 'heading') heading(part.level + 1, part.text);
    else if (part.kind === 'code') paragraph(part.text, regular, 10);
    else paragraph(part.text);
  }
  flushList();

  const box = (checked: boolean) => (embedded ? (checked ? '☑' : '☐') : checked ? '[x]' : '[ ]');
  const ticked = new Set(copy.statementIds);
  const statements = form.requiredStatements.filter((statement) => ticked.has(statement.id));
  if (statements.length > 0) {
    doc.moveDown(0.5);
    heading(2, labels.statements);
    list(statements.map((statement) => ({ label: box(true), body: statement.text })));
  }
  if (form.optionalChoices.length > 0) {
    doc.moveDown(0.5);
    heading(2, labels.choices);
    list(form.optionalChoices.map((choice) => ({ label: box(copy.choices[choice.id] === true), body: `${choice.text}: ${copy.choices[choice.id] === true ? labels.agreed : labels.declined}` })));
  }

  doc.moveDown(0.5);
  const time = new Intl.DateTimeFormat(copy.locale, { dateStyle: 'long', timeStyle: 'long', timeZone: copy.timeZone }).format(copy.signedAt);
  paragraph(`${labels.signedBy}: ${copy.fullName}`, bold, 12, 0.3);
  paragraph(`${labels.signedAt}: ${time}`, regular, 11, 0);
  // Machine-readable values on lines of their own, so that they read the same in either direction.
  paragraph(copy.signedAt.toISOString(), regular, 9, 0.3);
  paragraph(`${labels.version}: ${form.version}`, regular, 10, 0);
  paragraph(form.consentFormId, regular, 9, 0.3);
  paragraph(`${labels.contentHash}:`, regular, 10, 0);
  paragraph(form.contentSha256, regular, 9, 0.3);

  root.end();
  doc.end();
  return done;
}
