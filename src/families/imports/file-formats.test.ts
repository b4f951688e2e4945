import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createProperties } from '../../../test/people-factory.js';
import { peopleByEmail, postCsv, settleImport, startImport } from './test-support.js';

/**
 * Files as people have them: saved by a spreadsheet program (a `;` or tab separator, a byte-order
 * mark, CRLF, cells quoted because they hold the separator, quotes or line breaks, UTF-16 "Unicode
 * text"), or broken (another encoding, an unknown column, a quote out of place), and the report
 * that says exactly which rows went in.
 */

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/** A file as Excel saves it: a byte-order mark, CRLF, a cell quoted when it holds the separator, a quote or a line break. */
function excelFile(rows: string[][], separator: string, options: { bom?: boolean } = {}): string {
  const cell = (text: string) => (text.includes(separator) || /["\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  return `${options.bom === false ? '' : '\uFEFF'}${rows.map((row) => row.map(cell).join(separator)).join('\r\n')}\r\n`;
}

/** The body delivered in pieces of `size` bytes, as a slow upload would arrive: characters and line breaks get cut. */
const inPieces = (bytes: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) => bytes.subarray(index * size, (index + 1) * size)));

/** Nothing of a refused file is left: no import, no stored chunk, the people as they were. */
async function expectNothingChanged(tenant: Tenant, peopleBefore: string[]) {
  const { db } = service.deps;
  expect(await db.selectFrom('imports').select('import_id').where('workspace_id', '=', tenant.workspaceId).execute()).toEqual([]);
  expect(await db.selectFrom('import_chunks').select('import_id').where('workspace_id', '=', tenant.workspaceId).execute()).toEqual([]);
  expect([...(await peopleByEmail(service, tenant.workspaceId)).keys()].sort()).toEqual([...peopleBefore].sort());
}

/** Posts a file that must be refused with 400; answers the errors. */
async function refused(tenant: Tenant, body: string | Buffer | Readable) {
  const response = await postCsv(service, tenant.token, body);
  expect(response.statusCode, response.body).toBe(400);
  return response.json<{ errors: { message: string; path: string[] }[] }>().errors;
}

describe('files saved by spreadsheet programs', () => {
  it.each([
    ['comma', ','],
    ['semicolon', ';'],
    ['tab', '\t'],
  ])('imports a %s-separated file with a byte-order mark, CRLF, and quoted cells holding the separator, quotes and line breaks', async (_name, separator) => {
    const tenant = await createTenant(service);
    const { Nickname, Colours } = await createProperties(service, tenant, [
      { name: 'Nickname', propertyType: 'STRING' },
      { name: 'Colours', propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'Red' }, { name: 'Blue' }] },
    ]);
    const [ada, grace, alan] = [uniqueEmail('ada'), uniqueEmail('grace'), uniqueEmail('alan')];
    const file = excelFile(
      [
        ['email', 'firstName', 'lastName', 'Nickname', 'Colours'],
        [ada, 'Ada', 'Lovelace, Countess', 'The "Enchantress"; of numbers', 'Red;Blue'],
        // Excel writes a line break typed in a cell (Alt+Enter) as LF, inside the quotes.
        [grace, 'Grace', 'Hopper', 'Amazing\nGrace', 'Blue'],
        [alan, 'Alan', 'Turing', 'one\ttab', ''],
        ['not-an-email', 'Bad', '', '', ''],
      ],
      separator,
    );
    const importId = await startImport(service, tenant, file);
    // Row 3 spans two lines of the file, and is still row 3: the bad row is row 5, as a spreadsheet shows it.
    expect(await settleImport(service, tenant, importId)).toEqual({
      importId,
      status: 'COMPLETED',
      rowsTotal: 4,
      rowsImported: 3,
      rowsFailed: 1,
      errors: [{ row: 5, message: 'email is not a valid email address' }],
      lastRow: 5,
    });
    expect(await service.deps.db.selectFrom('imports').select('delimiter').where('import_id', '=', importId).executeTakeFirstOrThrow()).toEqual({ delimiter: separator });
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect([...people.keys()].sort()).toEqual([ada, grace, alan].sort());
    expect(people.get(ada)).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace, Countess', properties: { [Nickname!]: 'The "Enchantress"; of numbers', [Colours!]: ['Red', 'Blue'] } });
    expect(people.get(grace)!.properties).toEqual({ [Nickname!]: 'Amazing\nGrace', [Colours!]: ['Blue'] });
    expect(people.get(alan)!.properties).toEqual({ [Nickname!]: 'one\ttab' });
  });

  it('reads a semicolon file whose property name holds a comma: the separator that names known columns wins', async () => {
    const tenant = await createTenant(service);
    const { 'Height, cm': height } = await createProperties(service, tenant, [{ name: 'Height, cm', propertyType: 'NUMBER' }]);
    // Split by commas the header is two columns too ("email;Height" and "cm"), neither of them known.
    const email = uniqueEmail('tall');
    const importId = await startImport(service, tenant, `email;Height, cm\n${email};181\n`);
    expect(await settleImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsImported: 1, rowsFailed: 0 });
    expect((await peopleByEmail(service, tenant.workspaceId)).get(email)!.properties).toEqual({ [height!]: 181 });
  });

  it('imports Excel\'s "Unicode text" (UTF-16 LE with its byte-order mark, tab-separated), arriving in pieces that cut its characters', async () => {
    const tenant = await createTenant(service);
    const { Nickname } = await createProperties(service, tenant, [{ name: 'Nickname', propertyType: 'STRING' }]);
    const [zoe, lukasz] = [uniqueEmail('zoe'), uniqueEmail('lukasz')];
    const text = excelFile(
      [
        ['email', 'firstName', 'lastName', 'Nickname'],
        [zoe, 'Zoë', 'Ångström', '日本 🎉'],
        [lukasz, 'Łukasz', 'Żółć', 'two\nlines'],
      ],
      '\t',
      { bom: false },
    );
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    // Odd-sized pieces cut UTF-16 code units, and the emoji's surrogate pair.
    const importId = await startImport(service, tenant, inPieces(bytes, 7));
    expect(await settleImport(service, tenant, importId)).toEqual({ importId, status: 'COMPLETED', rowsTotal: 2, rowsImported: 2, rowsFailed: 0, errors: [], lastRow: 3 });
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect(people.get(zoe)).toMatchObject({ first_name: 'Zoë', last_name: 'Ångström', properties: { [Nickname!]: '日本 🎉' } });
    expect(people.get(lukasz)).toMatchObject({ first_name: 'Łukasz', last_name: 'Żółć', properties: { [Nickname!]: 'two\nlines' } });
  });

  it('imports UTF-8 arriving in pieces that cut its characters, and a file whose lines end in CR alone', async () => {
    const tenant = await createTenant(service);
    const [first, second] = [uniqueEmail('renee'), uniqueEmail('jose')];
    const utf8 = Buffer.from(`email,firstName,lastName\n${first},Renée,Ørsted\n${second},José,日本\n`);
    await settleImport(service, tenant, await startImport(service, tenant, inPieces(utf8, 1)));
    const oldMac = `email,firstName\r${uniqueEmail('mac')},Mac\r\rnot-an-email,Bad\r`;
    const oldMacId = await startImport(service, tenant, oldMac);
    expect(await settleImport(service, tenant, oldMacId)).toMatchObject({ status: 'COMPLETED', rowsImported: 1, errors: [{ row: 4, message: 'email is not a valid email address' }] });
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect(people.get(first)).toMatchObject({ first_name: 'Renée', last_name: 'Ørsted' });
    expect(people.get(second)).toMatchObject({ first_name: 'José', last_name: '日本' });
  });
});

describe('files that are not UTF-8 text are refused whole, naming the line', () => {
  const saveAs = 'Save it from the spreadsheet program as "CSV UTF-8" (comma, semicolon or tab separated) and upload that file.';

  it('refuses a Windows-1252 file with 400 naming the line of its first byte that is not UTF-8, changing nothing', async () => {
    const tenant = await createTenant(service);
    const before = await createPerson(service, tenant);
    const latin1 = Buffer.from(`email,lastName\r\n${uniqueEmail('one')},Smith\r\n${uniqueEmail('two')},Jones\r\n${uniqueEmail('three')},Müller\r\n`, 'latin1');
    expect(await refused(tenant, latin1)).toEqual([
      {
        message: `The file is not UTF-8 text: line 4 has a byte that is not UTF-8, as in a file saved in another encoding (Windows-1252, Latin-1, Mac Roman). ${saveAs}`,
        path: [],
      },
    ]);
    await expectNothingChanged(tenant, [before.email]);
    // In the header, before any column is checked: line 1.
    const header = await refused(tenant, Buffer.from('email,Prénom\n', 'latin1'));
    expect(header[0]!.message).toMatch(/^The file is not UTF-8 text: line 1 has a byte/);
  });

  it('names the line of a bad byte megabytes into the file, after the chunks before it were stored, and keeps none of them', async () => {
    const tenant = await createTenant(service);
    const lines = ['email,lastName'];
    for (let index = 0; index < 40_000; index++) lines.push(`person${index}@example.test,Name number ${index}`);
    const good = Buffer.from(`${lines.join('\r\n')}\r\n`);
    expect(good.length).toBeGreaterThan(1024 * 1024);
    const file = Buffer.concat([good, Buffer.from('late@example.test,Müller\r\n', 'latin1')]);
    const errors = await refused(tenant, inPieces(file, 64 * 1024));
    expect(errors).toEqual([{ message: expect.stringMatching(/^The file is not UTF-8 text: line 40,002 has a byte that is not UTF-8/), path: [] }]);
    await expectNothingChanged(tenant, []);
  });

  it.each([
    ['an Excel workbook (.xlsx)', Buffer.from('PK\u0003\u0004\u0014\u0000\u0006\u0000', 'latin1'), 'The file is a spreadsheet workbook (.xlsx or .xls), not CSV text.', []],
    ['UTF-16 without a byte-order mark', Buffer.from('email,firstName\r\n', 'utf16le'), 'The header row holds NUL characters: the file looks like UTF-16 text without a byte-order mark.', ['header']],
    ['UTF-16 cut in the middle of a character', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('email\r\nx@example.org', 'utf16le'), Buffer.from([0x0a])]), 'The file starts with a UTF-16 byte-order mark but is not valid UTF-16 text, at or after line 2.', []],
  ])('refuses %s with 400 saying to save it as CSV UTF-8', async (_case, body, message, path) => {
    const tenant = await createTenant(service);
    expect(await refused(tenant, body)).toEqual([{ message: `${message} ${saveAs}`, path }]);
    await expectNothingChanged(tenant, []);
  });
});

describe('the header', () => {
  it('reports every unknown, unnamed and repeated column in one 400, with where each is and the columns allowed', async () => {
    const tenant = await createTenant(service);
    await createProperties(service, tenant, [
      { name: 'Plan', propertyType: 'STRING' },
      { name: 'Age', propertyType: 'NUMBER' },
    ]);
    const allowed = 'The columns are email (required), firstName, lastName, phone, and the workspace\'s person properties: "Age", "Plan".';
    const errors = await refused(tenant, 'Email;First Name;Shoe size;;lastName;LASTNAME;age\nx@example.org;X;42;;Y;Y;30\n');
    expect(errors).toEqual([
      { message: `Unknown column "First Name" (column 2, B). Did you mean "firstName"? ${allowed}`, path: ['header', 'First Name'] },
      { message: `Unknown column "Shoe size" (column 3, C). ${allowed}`, path: ['header', 'Shoe size'] },
      { message: `The header's column 4, D has no name: name it after a column the import knows, or remove the column. ${allowed}`, path: ['header', ''] },
      { message: 'Column "LASTNAME" appears twice in the header (column 5, E, and column 6, F): a column may appear once', path: ['header', 'LASTNAME'] },
    ]);
    await expectNothingChanged(tenant, []);
  });

  it('reports a missing email column together with the unknown ones', async () => {
    const tenant = await createTenant(service);
    const errors = await refused(tenant, 'E-mail\tName\n');
    expect(errors).toEqual([
      { message: expect.stringMatching(/^Unknown column "E-mail" \(column 1, A\)\. Did you mean "email"\? The columns are email \(required\), firstName, lastName, phone; the workspace has no person properties/), path: ['header', 'E-mail'] },
      { message: expect.stringMatching(/^Unknown column "Name" \(column 2, B\)\. The columns are/), path: ['header', 'Name'] },
      { message: 'The header has no email column: every row is matched to a person by email', path: ['header', 'email'] },
    ]);
  });

  it('names what is wrong with a header whose quote is never closed', async () => {
    const tenant = await createTenant(service);
    expect(await refused(tenant, 'email,"firstName\nx@example.org,X\n')).toEqual([
      {
        message:
          'The header row is not valid CSV. The header row (line 1): the cell in column 2, B opens a quote that is never closed, so the rest of the file would be part of it. Close the quote, or double a quote meant as a character ("")',
        path: ['header'],
      },
    ]);
    await expectNothingChanged(tenant, []);
  });
});

describe('a row where the file stops being valid CSV', () => {
  // Row 2 spans lines 2-3 (a CRLF inside its quotes), row 3 is a blank line (line 4): the broken
  // row 5 starts on line 6.
  const file = (broken: string, good: string[]) =>
    `email,firstName,Nickname\r\n${good[0]},A,"two\r\nlines"\r\n\r\n${good[1]},B,plain\r\n${broken}\r\n${good[2]},C,after\r\n${good[3]},D,after\r\n`;
  const closeIt = 'Close the quote, or double a quote meant as a character ("")';

  it.each([
    ['a quote never closed', (email: string) => `${email},X,"never closed`, `the cell in "Nickname" (column 3, C) opens a quote that is never closed, so the rest of the file would be part of it. ${closeIt}`],
    [
      'a quote inside a cell that is not quoted',
      (email: string) => `${email},X,5'11" tall`,
      'the cell in "Nickname" (column 3, C) has a quote inside it but does not start with one. A cell holding a quote must be quoted whole, its quotes doubled: 5\'11" is written "5\'11"""',
    ],
    [
      'text after a closing quote',
      (email: string) => `${email},"X"Y,plain`,
      'in the cell in "firstName" (column 2, B), a closing quote is followed by more text before the next separator. A quote inside a quoted cell must be doubled ("")',
    ],
  ])('stops at %s, naming its row, line and column; the rows before it go in, the rows after it are not read', async (_case, brokenRow, what) => {
    const tenant = await createTenant(service);
    await createProperties(service, tenant, [{ name: 'Nickname', propertyType: 'STRING' }]);
    const good = [uniqueEmail('a'), uniqueEmail('b'), uniqueEmail('c'), uniqueEmail('d')];
    const importId = await startImport(service, tenant, file(brokenRow(uniqueEmail('x')), good));
    const where = `Row 5 (line 6 of the file): ${what}`;
    expect(await settleImport(service, tenant, importId)).toEqual({
      importId,
      status: 'FAILED',
      rowsTotal: 3,
      rowsImported: 2,
      rowsFailed: 1,
      errors: [{ row: 5, message: `${where}. The import stopped at this row: the rows after it were not read` }],
      lastRow: 5,
      failureReason: `${where}. The file is not valid CSV from there on, so the import stopped: the rows before row 5 were read (imported, or refused as listed in errors); row 5 and the rows after it were not imported`,
    });
    expect([...(await peopleByEmail(service, tenant.workspaceId)).keys()].sort()).toEqual([good[0]!, good[1]!].sort());
  });

  it('imports the 4,998 rows before a broken quote on line 5,000 of 10,000, and no row after it', async () => {
    const tenant = await createTenant(service);
    const lines = ['email,firstName'];
    for (let row = 2; row <= 10_000; row++) lines.push(row === 5_000 ? `broken${row}@example.test,"Broken` : `person${row}.${tenant.workspaceId.toLowerCase()}@example.test,Row ${row}`);
    const importId = await startImport(service, tenant, `${lines.join('\n')}\n`);
    const report = await settleImport(service, tenant, importId);
    expect(report).toMatchObject({ status: 'FAILED', rowsTotal: 4_999, rowsImported: 4_998, rowsFailed: 1, lastRow: 5_000 });
    expect(report.errors).toEqual([{ row: 5_000, message: expect.stringMatching(/^Row 5,000 \(line 5,000 of the file\): the cell in "firstName" \(column 2, B\) opens a quote that is never closed/) }]);
    expect(report.rowsTotal).toBe(report.rowsImported + report.rowsFailed);
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect(people.size).toBe(4_998);
    expect(people.has(`person4999.${tenant.workspaceId.toLowerCase()}@example.test`)).toBe(true);
    expect(people.has(`person5001.${tenant.workspaceId.toLowerCase()}@example.test`)).toBe(false);
  }, 120_000);
});

describe('the report', () => {
  it('numbers rows as a spreadsheet does (blank lines are rows, a cell of several lines is one row), naming exactly the refused ones', async () => {
    const tenant = await createTenant(service);
    const { Nickname } = await createProperties(service, tenant, [{ name: 'Nickname', propertyType: 'STRING' }]);
    const good = [uniqueEmail('good1'), uniqueEmail('good2'), uniqueEmail('good3')];
    const text = [
      'email,firstName,Nickname',
      `${good[0]},One,`,
      '',
      'not-an-email,Two,',
      `${good[1]},Three,"several`,
      'lines',
      'of it"',
      `${uniqueEmail('short')},Four`,
      ',,',
      '',
      `${good[2]},Five,`,
    ].join('\n');
    const importId = await startImport(service, tenant, text);
    const report = await settleImport(service, tenant, importId);
    expect(report).toEqual({
      importId,
      status: 'COMPLETED',
      rowsTotal: 6,
      rowsImported: 3,
      rowsFailed: 3,
      errors: [
        { row: 4, message: 'email is not a valid email address' },
        { row: 6, message: 'The row has 2 cells; the header has 3 columns' },
        { row: 7, message: 'email is empty' },
      ],
      lastRow: 9,
    });
    // A spreadsheet's reading of the file (every record a row, blank ones too) puts the refused
    // rows where the report says, and the imported people on the other rows.
    const sheet = parse(text, { relax_column_count: true }) as string[][];
    const failedRows = new Set(report.errors.map((error) => error.row));
    const importedEmails = sheet.flatMap((record, index) => (index > 0 && !failedRows.has(index + 1) && record[0] !== '' ? [record[0]!] : []));
    expect(importedEmails.sort()).toEqual([...good].sort());
    expect(sheet[3]![0]).toBe('not-an-email');
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect([...people.keys()].sort()).toEqual([...good].sort());
    expect(people.get(good[1]!)!.properties).toEqual({ [Nickname!]: 'several\nlines\nof it' });
  });

  it('lists the first 1,000 refused rows and counts the others, which all come after them', async () => {
    const tenant = await createTenant(service);
    const lines = ['email'];
    // Rows 2-1,004 refused, rows 1,005-1,006 imported.
    for (let row = 2; row <= 1_004; row++) lines.push(`bad-${row}`);
    lines.push(uniqueEmail('good1'), uniqueEmail('good2'));
    const importId = await startImport(service, tenant, `${lines.join('\n')}\n`);
    const report = await settleImport(service, tenant, importId);
    expect(report).toMatchObject({ status: 'COMPLETED', rowsTotal: 1_005, rowsImported: 2, rowsFailed: 1_003, errorsOmitted: 3, lastRow: 1_006 });
    expect(report.errors.map((error) => error.row)).toEqual(Array.from({ length: 1_000 }, (_, index) => index + 2));
    expect(report.rowsTotal).toBe(report.rowsImported + report.rowsFailed);
  });
});
