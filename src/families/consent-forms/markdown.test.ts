import { describe, expect, it } from 'vitest';
import { markdownBlocks, renderMarkdown } from './markdown.js';

/**
 * What the rendered HTML must never hold, whatever the Markdown: an element that runs or loads
 * something, an event attribute, or an address with a scheme other than http, https and mailto.
 * Checked on the HTML as a browser would read it: every tag and attribute the output contains.
 */
function dangers(html: string): string[] {
  const found: string[] = [];
  for (const [tag, name, attributes] of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
    if (!['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'a', 'strong', 'em', 'code', 'pre', 'blockquote', 'hr', 'br', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 's'].includes(name!.toLowerCase()))
      found.push(`element ${tag}`);
    for (const [, attribute, value] of attributes!.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
      const lower = attribute!.toLowerCase();
      if (lower.startsWith('on') || lower === 'style' || lower === 'srcdoc' || lower === 'src') found.push(`attribute ${attribute}`);
      if ((lower === 'href' || lower === 'action' || lower === 'formaction') && !/^(https?:\/\/|mailto:)/i.test(value ?? '')) found.push(`address ${value}`);
    }
  }
  return found;
}

const payloads: [string, string][] = [
  ['a script element', '<script>alert(1)</script>'],
  ['a script in a paragraph', 'Hello <script src="https://evil.example/x.js"></script> there'],
  ['a style element', '<style>body{display:none}</style>'],
  ['an inline style', '<p style="background:url(javascript:alert(1))">x</p>'],
  ['an img with onerror', '<img src=x onerror=alert(1)>'],
  ['an svg with onload', '<svg onload=alert(1)>'],
  ['an iframe', '<iframe src="javascript:alert(1)"></iframe>'],
  ['an HTML block', '<div>\n<a href="javascript:alert(1)">x</a>\n</div>'],
  ['an HTML comment', '<!-- <script>alert(1)</script> -->'],
  ['a javascript: link', '[click](javascript:alert(1))'],
  ['an upper-case JavaScript: link', '[click](JaVaScRiPt:alert(1))'],
  ['a javascript: link with entities', '[click](jav&#x61;script:alert(1))'],
  ['a javascript: link with a tab', '[click](jav&#x09;ascript:alert(1))'],
  ['a javascript: link with a leading space', '[click]( javascript:alert(1))'],
  ['a javascript: link in angle brackets', '[click](<javascript:alert(1)>)'],
  ['a javascript: autolink', '<javascript:alert(1)>'],
  ['a javascript: reference link', '[click][x]\n\n[x]: javascript:alert(1)'],
  ['a data: link', '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['a vbscript: link', '[click](vbscript:msgbox(1))'],
  ['a file: link', '[click](file:///etc/passwd)'],
  ['a protocol-relative link', '[click](//evil.example/)'],
  ['an image with a javascript: source', '![x](javascript:alert(1))'],
  ['an image (a request to a third party)', '![pixel](https://tracker.example/p.gif)'],
  ['an image with an onerror title', '![x](https://x.example/a.png "\\" onerror=\\"alert(1)")'],
  ['a link title breaking out', '[x](https://example.org "a\\" onmouseover=\\"alert(1)")'],
  ['a link address breaking out', '[x](https://example.org/"onmouseover="alert(1))'],
  ['an attribute-looking text', 'x" onclick="alert(1)'],
  ['a link inside raw HTML', '<a href="https://example.org" onclick="alert(1)">x</a>'],
  ['an unclosed tag', '<img src=x onerror=alert(1)//'],
  ['a form', '<form action="javascript:alert(1)"><button formaction="javascript:alert(1)">x</button></form>'],
  ['a meta refresh', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'],
  ['an object', '<object data="javascript:alert(1)"></object>'],
  ['a base element', '<base href="javascript:alert(1)//">'],
  ['a code span holding a script', '`<script>alert(1)</script>`'],
  ['a fenced block holding a script', '```html\n<script>alert(1)</script>\n```'],
];

describe('renderMarkdown', () => {
  it.each(payloads)('lets nothing dangerous through: %s', async (_case, source) => {
    const html = await renderMarkdown(source);
    expect(dangers(html), html).toEqual([]);
    expect(html).not.toMatch(/<script|<style|<img|<iframe|<svg|<object|<form|<meta|<base/i);
    expect(html).not.toMatch(/href="(?!https?:\/\/|mailto:)/i);
  });

  it('the check above catches what it looks for (it can fail)', () => {
    expect(dangers('<p onclick="x">a</p><script></script><a href="javascript:x">y</a><img src="a">')).toEqual([
      'attribute onclick',
      'element <script>',
      'element </script>',
      'address javascript:x',
      'element <img src="a">',
      'attribute src',
    ]);
  });

  it('keeps headings, paragraphs, lists, emphasis and http, https and mailto links, which open with rel="noopener noreferrer"', async () => {
    const html = await renderMarkdown('## Title\n\nSome *text* and **more**.\n\n1. one\n2. two\n\n- [site](https://example.org/a?b=1&c=2)\n- [plain](http://example.org)\n- [mail](mailto:team@example.org)');
    expect(html).toBe(
      '<h2>Title</h2>\n<p>Some <em>text</em> and <strong>more</strong>.</p>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n<ul>\n' +
        '<li><a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer">site</a></li>\n' +
        '<li><a href="http://example.org" rel="noopener noreferrer">plain</a></li>\n' +
        '<li><a href="mailto:team@example.org" rel="noopener noreferrer">mail</a></li>\n</ul>\n',
    );
  });

  it('shows raw HTML as text, escaped', async () => {
    expect(await renderMarkdown('I <b>agree</b> & consent')).toBe('<p>I &lt;b&gt;agree&lt;/b&gt; &amp; consent</p>\n');
  });
});

describe('markdownBlocks', () => {
  it('flattens the body to headings, paragraphs and list items for the PDF, keeping where links pointed', async () => {
    expect(await markdownBlocks('# Title\n\nA *b* [c](https://example.org).\n\n- one\n- two\n  1. deep\n\n```\ncode\n```')).toEqual([
      { kind: 'heading', level: 1, text: 'Title' },
      { kind: 'paragraph', text: 'A b c (https://example.org).' },
      { kind: 'listItem', ordinal: '•', depth: 1, text: 'one' },
      { kind: 'listItem', ordinal: '•', depth: 1, text: 'two' },
      { kind: 'listItem', ordinal: '1.', depth: 2, text: 'deep' },
      { kind: 'code', text: 'code' },
    ]);
  });
});
