import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.js';
import { parseTemplate, renderTemplate, type TemplateField, type TemplateValues, variableCatalogue } from './template-language.js';

const values: TemplateValues = {
  person: { firstName: 'Ada <b>', lastName: 'Lovelace', fullName: 'Ada <b> Lovelace', email: 'ada@example.org' },
  study: { externalName: 'Paying & "online"', externalDescription: '' },
  workspace: { name: 'Acme' },
  links: { screener: 'https://x.invalid/s', consent: 'https://x.invalid/c', scheduling: 'https://x.invalid/b', unsubscribe: 'https://x.invalid/u' },
};

async function refusal(field: TemplateField, source: string) {
  try {
    await parseTemplate(field, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).items[0]!;
  }
  throw new Error(`${source} was accepted`);
}

const render = async (field: TemplateField, source: string) => {
  await parseTemplate(field, source);
  return renderTemplate(field, source, values);
};

describe('the template language', () => {
  it('accepts every variable of the catalogue and reports those used', async () => {
    const source = variableCatalogue.map((variable) => `{{ ${variable.name} }}`).join(' ');
    expect([...(await parseTemplate('textBody', source)).variables].sort()).toEqual(variableCatalogue.map((variable) => variable.name).sort());
  });

  it("accepts the template's own variables (assign, capture, for) and standard filters", async () => {
    const source = '{% assign name = person.firstName | default: "there" %}{% capture who %}{{ name | upcase }}{% endcapture %}{% for n in (1..2) %}{{ forloop.index }}{{ n }}{% endfor %} {{ who }}';
    expect(await render('textBody', source)).toBe('1122 ADA <B>');
  });

  it.each([
    ['textBody', 'Hi {{ person.nickname }}', 'person.nickname', '(line 1, column 7)'],
    ['subject', '{{ study.name }}', 'study.name', 'line 1'],
    ['htmlBody', '<p>\n{% if person %}x{% endif %}</p>', 'person', 'line 2'],
    ['textBody', '{{ links[person.firstName] }}', 'links[person.firstName]', ''],
    ['textBody', '{{ secret }}', 'secret', ''],
  ] as const)('refuses in %s the unknown variable of %j, naming it and the field', async (field, source, variable, where) => {
    const item = await refusal(field, source);
    expect(item.path).toEqual([field]);
    expect(item.message).toContain(`unknown variable ${variable}`);
    expect(item.message).toContain(where);
  });

  it.each([
    ['an unclosed output', '{{ person.firstName '],
    ['an unclosed tag', '{% if person.firstName %}'],
    ['an unknown tag', '{% nope %}'],
    ['an unknown filter', '{{ person.firstName | shout }}'],
    ['the raw filter', '{{ person.firstName | raw }}'],
    ['include, which would read a file', '{% include "/etc/passwd" %}'],
    ['render', '{% render "other" %}'],
    ['layout', '{% layout "base" %}'],
  ])('refuses %s as a syntax error of the field', async (_case, source) => {
    const item = await refusal('htmlBody', source);
    expect(item.path).toEqual(['htmlBody']);
    expect(item.message).toMatch(/^htmlBody is not a valid template: /);
  });

  it('escapes values in the HTML body and leaves them as they are in the text body and the subject', async () => {
    expect(await render('htmlBody', '<p>{{ person.firstName }} / {{ study.externalName }}</p>')).toBe('<p>Ada &lt;b&gt; / Paying &amp; &#34;online&#34;</p>');
    expect(await render('textBody', '{{ person.firstName }} / {{ study.externalName }}')).toBe('Ada <b> / Paying & "online"');
    expect(await render('subject', '{{ study.externalName }}')).toBe('Paying & "online"');
  });

  it('stops a template that runs too long with a 400 on its field', async () => {
    const error = await render('textBody', '{% for i in (1..100000000) %}{{ i }}{% endfor %}').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).items[0]!.path).toEqual(['textBody']);
  });
});
