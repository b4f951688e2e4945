import { readdirSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './processes.js';

/** The shell examples of the documentation, for the tests that run them (docs-examples, backup-restore). */

export interface ShellBlock {
  file: string;
  /** The line of the opening fence, from 1. */
  line: number;
  code: string;
  /** Why the block is not run, when it is not. */
  skip?: string;
}

/** The ```sh blocks of a markdown text, with the skip marker on the line above each, if any. */
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let at = 0; at < lines.length; at++) {
    const fence = /^(\s*)```(\S*)/.exec(lines[at]!);
    if (!fence) continue;
    const end = lines.findIndex((line, index) => index > at && line.trim() === '```');
    if (end < 0) throw new Error(`${file}:${at + 1}: a code block that is never closed`);
    if (fence[2] === 'sh') {
      const marker = /^<!-- docs-test: skip: (.+) -->$/.exec(lines[at - 1]?.trim() ?? '');
      const indent = fence[1]!.length;
      blocks.push({ file, line: at + 1, code: lines.slice(at + 1, end).map((line) => line.slice(indent)).join('\n'), ...(marker ? { skip: marker[1]! } : {}) });
    }
    at = end;
  }
  return blocks;
}

/** README.md and every markdown file below docs/. */
export function documentationFiles(): string[] {
  const docs = readdirSync(path.join(projectRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name));
  return ['README.md', ...docs.sort()];
}
