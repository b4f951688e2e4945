import type { MarkdownIt, Token } from 'markdown-it';

/**
 * A consent form's body is Markdown written by the research team and shown to people who are
 * not: the HTML made from it must carry nothing that runs or reaches out. markdown-it is
 * configured so that safety comes from what it can produce, not from cleaning afterwards:
 *
 * - `html: false`: raw HTML in the source (a `<script>`, an `<img onerror>`) is text, escaped.
 * - Images are switched off: a consent page makes no request to a third party (issue 33's CSP),
 *   and `![x](https://tracker.example/p.gif)` would be one.
 * - A link's address must be http, https or mailto (checked after markdown-it has decoded its
 *   entities and escapes, so `jav&#x61;script:` is seen as `javascript:`); any other is left as
 *   the link's text. Links open with `rel="noopener noreferrer"`.
 * - No typographer or linkify: what the team wrote is what is hashed and what is shown.
 *
 * markdown-it is loaded on first use (a chunk of its own in the bundle), as LiquidJS is, so the
 * server's start does not parse it.
 */
let renderer: Promise<MarkdownIt> | undefined;

const allowedLink = /^(https?:\/\/|mailto:)/i;

async function markdownRenderer(): Promise<MarkdownIt> {
  renderer ??= import('markdown-it').then(({ default: markdownIt }) => {
    const md = markdownIt({ html: false, linkify: false, typographer: false, breaks: false });
    md.disable(['image']);
    md.validateLink = (url: string) => allowedLink.test(url.trim());
    md.renderer.rules.link_open = (tokens: Token[], index: number, options, _env, self) => {
      tokens[index]!.attrSet('rel', 'noopener noreferrer');
      return self.renderToken(tokens, index, options);
    };
    return md;
  });
  return renderer;
}

/** The body's Markdown as safe HTML (see above). */
export async function renderMarkdown(source: string): Promise<string> {
  return (await markdownRenderer()).render(source);
}

/** One block of a body, for the signed copy's PDF: headings, paragraphs and list items as plain text. */
export type MarkdownBlock =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'listItem'; ordinal: string; depth: number; text: string }
  | { kind: 'code'; text: string };

/**
 * The body's blocks in order, each block's inline content flattened to text (emphasis dropped, a
 * link written as "text (address)" so that the paper copy keeps where it pointed).
 */
export async function markdownBlocks(source: string): Promise<MarkdownBlock[]> {
  const md = await markdownRenderer();
  const tokens = md.parse(source, {});
  const blocks: MarkdownBlock[] = [];
  const lists: { ordered: boolean; next: number }[] = [];
  let pending: { kind: 'heading'; level: number } | { kind: 'paragraph' } | undefined;
  let itemOrdinal: string | undefined;
  for (const token of tokens) {
    switch (token.type) {
      case 'bullet_list_open':
        lists.push({ ordered: false, next: 1 });
        break;
      case 'ordered_list_open':
        lists.push({ ordered: true, next: Number(token.attrGet('start') ?? 1) });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'list_item_open': {
        const list = lists.at(-1)!;
        itemOrdinal = list.ordered ? `${list.next++}.` : '•';
        break;
      }
      case 'heading_open':
        pending = { kind: 'heading', level: Number(token.tag.slice(1)) };
        break;
      case 'paragraph_open':
        pending = { kind: 'paragraph' };
        break;
      case 'code_block':
      case 'fence':
        blocks.push({ kind: 'code', text: token.content.replace(/\n$/, '') });
        break;
      case 'inline': {
        const text = inlineText(token.children ?? []);
        if (pending?.kind === 'heading') blocks.push({ kind: 'heading', level: pending.level, text });
        else if (lists.length > 0 && itemOrdinal !== undefined) {
          blocks.push({ kind: 'listItem', ordinal: itemOrdinal, depth: lists.length, text });
          itemOrdinal = undefined;
        } else if (lists.length > 0) blocks.push({ kind: 'listItem', ordinal: '', depth: lists.length, text });
        else blocks.push({ kind: 'paragraph', text });
        pending = undefined;
        break;
      }
      default:
        break;
    }
  }
  return blocks;
}

function inlineText(children: Token[]): string {
  let text = '';
  let href: string | undefined;
  let linkText = '';
  for (const child of children) {
    if (child.type === 'link_open') {
      href = String(child.attrGet('href') ?? '');
      linkText = '';
    } else if (child.type === 'link_close') {
      text += href && href !== linkText && href !== `mailto:${linkText}` ? `${linkText} (${href})` : linkText;
      href = undefined;
    } else {
      const piece = child.type === 'softbreak' ? ' ' : child.type === 'hardbreak' ? '\n' : child.content;
      if (href !== undefined) linkText += piece;
      else text += piece;
    }
  }
  return text;
}
