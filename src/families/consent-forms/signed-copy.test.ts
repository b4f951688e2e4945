import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import { describe, expect, it } from 'vitest';
import { type SignedCopy, signedCopyPdf, visualRuns } from './signed-copy.js';

const english: SignedCopy = {
  form: {
    consentFormId: 'cfm_01JD0000000000000000000000',
    version: 3,
    title: 'Consent to take part in an interview',
    body: '# What happens\n\nWe talk for **45 minutes** about paying online. Questions: [write to us](mailto:research@example.org).\n\n1. You may stop at any time.\n2. Nothing is shared.\n   - not even your name',
    language: 'en',
    contentSha256: '3b1fa2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f',
    requiredStatements: [
      { id: 'read', text: 'I have read this information.' },
      { id: 'voluntary', text: 'I take part voluntarily.' },
    ],
    optionalChoices: [
      { id: 'recording', text: 'I agree to be recorded.' },
      { id: 'quotes', text: 'You may quote me.' },
    ],
  },
  fullName: 'Zoë Ünal',
  statementIds: ['read', 'voluntary'],
  choices: { recording: true },
  signedAt: new Date('2026-12-06T10:00:00.000Z'),
  locale: 'de-DE',
  timeZone: 'Europe/Berlin',
};

const arabic: SignedCopy = {
  ...english,
  form: {
    ...english.form,
    title: 'الموافقة على المشاركة',
    body: '# مقدمة\n\nنحن نتحدث لمدة 45 دقيقة.\n\n- يمكنك التوقف في أي وقت',
    language: 'ar',
    requiredStatements: [{ id: 'read', text: 'لقد قرأت هذه المعلومات' }],
    optionalChoices: [{ id: 'recording', text: 'أوافق على التسجيل' }],
  },
  fullName: 'فاطمة الزهراء',
  statementIds: ['read'],
  locale: 'ar-EG',
  timeZone: 'Africa/Cairo',
  labels: { statements: 'وافقت على', choices: 'اختياراتك', agreed: 'نعم', declined: 'لا', signedBy: 'التوقيع', signedAt: 'الوقت', version: 'الإصدار', contentHash: 'بصمة النموذج' },
};

async function read(pdf: Buffer) {
  const proxy = await getDocumentProxy(new Uint8Array(pdf));
  const { text, totalPages } = await extractText(proxy, { mergePages: true });
  const { info } = await getMeta(proxy);
  // Lines as one text: a paragraph wraps where the page's width says.
  return { text: text.replace(/\s+/g, ' '), totalPages, info: info as Record<string, unknown>, raw: pdf.toString('latin1') };
}

describe('signedCopyPdf', () => {
  it('holds the title, the text, the statements ticked, the choices made, the name, the time in the locale and zone, the version and its hash', async () => {
    const pdf = await signedCopyPdf(english, { compress: false });
    expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
    const { text, info } = await read(pdf);
    for (const expected of [
      'Consent to take part in an interview',
      'What happens',
      'We talk for 45 minutes about paying online. Questions: write to us (mailto:research@example.org).',
      '1. You may stop at any time.',
      '2. Nothing is shared.',
      '• not even your name',
      '☑ I have read this information.',
      '☑ I take part voluntarily.',
      '☑ I agree to be recorded.: Yes',
      '☐ You may quote me.: No',
      'Signed by: Zoë Ünal',
      'Signed at: 6. Dezember 2026 um 11:00:00 MEZ',
      '2026-12-06T10:00:00.000Z',
      'Version: 3',
      'cfm_01JD0000000000000000000000',
      english.form.contentSha256,
    ])
      expect(text).toContain(expected);
    expect(text).not.toMatch(/\*\*|\]\(/);
    expect(info).toMatchObject({ Title: english.form.title, Language: 'en', Creator: 'recruit-ops', CreationDate: 'D:20261206100000Z' });
  });

  it('is tagged for screen readers: marked, a structure tree of headings, paragraphs and lists, the language and the title shown', async () => {
    const { raw } = await read(await signedCopyPdf(english, { compress: false }));
    expect(raw).toMatch(/\/MarkInfo \d+ 0 R/);
    expect(raw).toMatch(/\/Marked true/);
    expect(raw).toMatch(/\/StructTreeRoot \d+ 0 R/);
    expect(raw).toContain('/Lang (en)');
    expect(raw).toMatch(/\/DisplayDocTitle true/);
    for (const tag of ['Document', 'H1', 'H2', 'P', 'L', 'LI', 'LBody']) expect(raw, tag).toMatch(new RegExp(`/S /${tag}\\b`));
    // Every piece of text drawn is inside marked content (BDC … EMC), none outside.
    const content = raw.split('stream').filter((part) => part.includes(' Tj') || part.includes(' TJ'));
    expect(content.length).toBeGreaterThan(0);
    for (const stream of content) expect(stream.replace(/\/[A-Za-z0-9]+ <<[^>]*>> BDC[\s\S]*?EMC/g, '')).not.toMatch(/T[jJ]\n/);
  });

  it('formats the time with Intl in the given locale and time zone', async () => {
    const { text } = await read(await signedCopyPdf({ ...english, locale: 'en-US', timeZone: 'America/New_York' }, { compress: false }));
    expect(text).toContain('Signed at: December 6, 2026 at 5:00:00 AM EST');
  });

  it('leaves out statements not ticked', async () => {
    const { text } = await read(await signedCopyPdf({ ...english, statementIds: ['read'] }, { compress: false }));
    expect(text).toContain('I have read this information.');
    expect(text).not.toContain('I take part voluntarily.');
  });

  it('is the same bytes for the same signature (its dates are the signing time, not the clock)', async () => {
    const [first, second] = await Promise.all([signedCopyPdf(english), signedCopyPdf(english)]);
    expect(first.equals(second)).toBe(true);
  });

  it('breaks a long text into lines and pages', async () => {
    const body = Array.from({ length: 40 }, (_, index) => `Paragraph ${index}: ${'a consent form can be long, '.repeat(12)}`).join('\n\n');
    const { text, totalPages } = await read(await signedCopyPdf({ ...english, form: { ...english.form, body } }, { compress: false }));
    expect(totalPages).toBeGreaterThan(3);
    expect(text).toContain('Paragraph 39:');
    expect(text).toContain(english.form.contentSha256);
  });

  it('embeds a font with Arabic glyphs and lays right-to-left text out from the right', async () => {
    const pdf = await signedCopyPdf(arabic, { compress: false });
    const { text, info, raw } = await read(pdf);
    expect(raw).toMatch(/\/FontFile2 \d+ 0 R/);
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans/);
    expect(raw).toContain('/Lang (ar)');
    expect(info).toMatchObject({ Title: 'الموافقة على المشاركة', Language: 'ar' });
    for (const expected of ['الموافقة على المشاركة', 'مقدمة', 'لقد قرأت هذه المعلومات', 'فاطمة الزهراء', '٢٠٢٦', '2026-12-06T10:00:00.000Z', arabic.form.contentSha256]) expect(text).toContain(expected);
  });

  it('falls back to a standard font when no font with wider glyphs is found: other characters become "?", and the record stays whole', async () => {
    const pdf = await signedCopyPdf(arabic, { compress: false, fontPath: '/nonexistent/DejaVuSans.ttf' });
    const { text, raw } = await read(pdf);
    expect(raw).not.toContain('/FontFile2');
    expect(raw).toContain('/BaseFont /Helvetica');
    expect(text).toContain('2026-12-06T10:00:00.000Z');
    expect(text).toContain(arabic.form.contentSha256);
    expect(text).toContain('[x]');
    expect(text).not.toMatch(/[\u0600-\u06ff]/);
    const latin = await read(await signedCopyPdf(english, { compress: false, fontPath: '/nonexistent/DejaVuSans.ttf' }));
    expect(latin.text).toContain('Signed by: Zoë Ünal');
  });
});

describe('visualRuns', () => {
  it('orders a right-to-left line from the right, keeping numbers and Latin words left to right', () => {
    expect(visualRuns('نحن نتحدث لمدة 45 دقيقة.', 'rtl')).toEqual([
      { text: ' دقيقة.', rtl: true },
      { text: '45', rtl: false },
      { text: 'نحن نتحدث لمدة ', rtl: true },
    ]);
    expect(visualRuns('التوقيع: Zoë Ünal', 'rtl')).toEqual([
      { text: 'Zoë Ünal', rtl: false },
      { text: 'التوقيع: ', rtl: true },
    ]);
  });

  it('leaves a left-to-right line as it is, and orders an Arabic name in it right to left', () => {
    expect(visualRuns('Signed by: Zoë', 'ltr')).toEqual([{ text: 'Signed by: Zoë', rtl: false }]);
    expect(visualRuns('Signed by: فاطمة الزهراء', 'ltr')).toEqual([
      { text: 'Signed by: ', rtl: false },
      { text: 'فاطمة الزهراء', rtl: true },
    ]);
  });

  it('reverses what fontkit would not: Arabic-Indic digits at an even level, punctuation alone at an odd one, and mirrors brackets', () => {
    // Arabic-Indic digits are of the Arabic script, which fontkit reverses: given reversed, they come out in order.
    expect(visualRuns('سنة ٢٠٢٦', 'rtl')).toEqual([
      { text: '٦٢٠٢', rtl: false },
      { text: 'سنة ', rtl: true },
    ]);
    expect(visualRuns('(نعم)', 'rtl')).toEqual([{ text: ')نعم(', rtl: true }]);
  });
});
