import type { Locator, Page } from 'playwright-core';
import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

type StudyType = 'INTERVIEWS' | 'SURVEY' | 'UNMODERATED_TEST' | 'GROUP_INTERVIEW';

describeConsole('console: participants, incentives and the event feed', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  /** The name a seeded person gets from their email: `ada.moves@example.org` is Ada Moves. */
  const nameOf = (email: string) =>
    email
      .split('@')[0]!
      .split('.')
      .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
      .join(' ');

  /** A study with `emails.length` participants (people made through the API, named by nameOf), launched unless `launch` is false. */
  async function seedStudy(name: string, studyType: StudyType, emails: string[], launch = true) {
    const api = world.api();
    const study = unwrap(await api.POST('/studies', { body: { studyType, recruitmentStrategy: 'IN_SERVICE', studyPlan: { name } } }));
    const personIds: string[] = [];
    for (const email of emails) {
      const [firstName, lastName] = nameOf(email).split(' ');
      personIds.push(unwrap(await api.POST('/people', { body: { email, firstName, lastName } })).personId);
    }
    const added = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: study.studyId } }, body: { personIds } }));
    expect(added.errors).toEqual([]);
    if (launch) unwrap(await api.POST('/studies/{studyId}/launch', { params: { path: { studyId: study.studyId } } }));
    return { studyId: study.studyId, participants: added.results, personIds };
  }

  const participantOf = async (studyId: string, participantId: string) =>
    unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));

  const openStudy = async (page: Page, studyId: string, name: string) => {
    await page.goto(`/console/studies/${encodeURIComponent(studyId)}`);
    await page.getByRole('heading', { name }).waitFor();
    await page.getByRole('table', { name: 'Participants' }).waitFor();
  };

  const rowOf = (page: Page, table: string, text: string): Locator => page.getByRole('table', { name: table }).locator('tbody tr', { hasText: text });

  /** The moves a participant's row offers: the options of its "Move … to" list. */
  const offeredMoves = async (page: Page, email: string) =>
    (await page.getByLabel(`Move ${email} to`).locator('option').allTextContents()).map((text) => text.trim()).filter((text) => text !== 'Move to…');

  /** Chooses a move in a row's list and applies it. */
  const move = async (page: Page, email: string, label: string) => {
    await page.getByLabel(`Move ${email} to`).selectOption({ label });
    await page.getByRole('button', { name: `Apply the move: ${email}` }).click();
  };

  /**
   * The API lists an event once every transaction older than it has ended, in the whole database
   * cluster: on a shared PostgreSQL another test's long transaction holds the newest events back.
   * A person then presses "Check for newer events" again; so does this, until `done` holds (60 s).
   */
  const checkForNewerEventsUntil = async (page: Page, done: () => Promise<boolean>): Promise<string | undefined> => {
    const check = page.getByRole('button', { name: 'Check for newer events' });
    const deadline = Date.now() + 60_000;
    let said: string | undefined;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`the feed did not show the expected events within 60 s of checking for newer ones (last: ${said})`);
      await page.waitForTimeout(250);
      // Both feeds (the participants' and the study's) answer, then the page shows what came.
      await Promise.all([page.waitForResponse((response) => response.url().includes('/participant-status-events')), check.click()]);
      await expect.poll(() => check.isEnabled()).toBe(true);
      said = (await page.getByRole('status').filter({ hasText: /newer event/ }).textContent()) ?? undefined;
    }
    return said;
  };

  it('moves a participant only as the state table allows, with the API’s refusal beside the row, and shows the moves in the event feed', async () => {
    const [ada, bob] = ['ada.moves@example.org', 'bob.moves@example.org'];
    const { studyId, participants, personIds } = await seedStudy('Moves interviews', 'INTERVIEWS', [ada, bob]);
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await openStudy(page, studyId, 'Moves interviews');
    await expectAccessible(page);

    // NOT_STARTED in a launched interview study: invite, schedule, cancel, hide (and approval, incentive).
    expect(await offeredMoves(page, ada)).toEqual(['Invite', 'Schedule', 'Mark canceled', 'Hide', 'Approve', 'Reject']);
    await move(page, ada, 'Invite');
    await rowOf(page, 'Participants', ada).getByText('Invited', { exact: true }).waitFor();
    expect((await participantOf(studyId, participants[0]!.participantId)).status).toBe('INVITED');
    // INVITED in an interview study: completed only from SCHEDULED, so no "Mark completed".
    await expect.poll(() => offeredMoves(page, ada)).toEqual(['Schedule', 'Mark canceled', 'Hide', 'Approve', 'Reject']);

    // SCHEDULED asks for the session's time first.
    await move(page, ada, 'Schedule');
    const start = rowOf(page, 'Participants', ada).getByLabel('Session start');
    await start.fill('2031-03-04T14:30');
    await expectAccessible(page);
    await rowOf(page, 'Participants', ada).getByRole('button', { name: 'Book session' }).click();
    await rowOf(page, 'Participants', ada).getByText('Scheduled', { exact: true }).waitFor();
    const scheduled = await participantOf(studyId, participants[0]!.participantId);
    expect(scheduled.status).toBe('SCHEDULED');
    expect(new Date(scheduled.interviewStartTime!).getFullYear()).toBe(2031);
    await expect.poll(() => offeredMoves(page, ada)).toEqual(['Mark completed', 'Mark no-show', 'Mark canceled', 'Hide', 'Approve', 'Reject']);

    // Approval.
    await move(page, ada, 'Approve');
    await rowOf(page, 'Participants', ada).getByText('Approved', { exact: true }).waitFor();
    expect((await participantOf(studyId, participants[0]!.participantId)).approvalStatus).toBe('APPROVED');

    // Bob opts out meanwhile: the table allows the invitation, the API refuses it, in words beside his row.
    unwrap(await world.api().PUT('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: personIds[1]! } }, body: { isOptedOut: true } }));
    await move(page, bob, 'Invite');
    await rowOf(page, 'Participants', bob).getByRole('alert').filter({ hasText: 'opted out' }).waitFor();
    expect((await participantOf(studyId, participants[1]!.participantId)).status).toBe('NOT_STARTED');
    await expectAccessible(page);
    expectNoPageErrors(world, page, [/status of 409/]);

    // The feed: newest first, who / what / when, the study's own launch and creation last.
    await page.getByRole('link', { name: 'Status events of this study' }).click();
    await page.getByRole('heading', { name: 'Status events: Moves interviews' }).waitFor();
    const feed = page.getByRole('table', { name: /Status events of Moves interviews/ }).locator('tbody tr');
    await checkForNewerEventsUntil(page, async () => (await feed.count()) === 5);
    // Who a participant is (their email) arrives after the events: wait for it.
    await expect.poll(async () => (await feed.allTextContents()).filter((row) => row.includes(ada)).length).toBe(3);
    const rows = (await feed.allTextContents()).map((row) => row.replace(/\s+/g, ' '));
    expect(rows[0]).toMatch(new RegExp(`${ada}.*Approval.*Pending review → Approved`));
    expect(rows[1]).toMatch(new RegExp(`${ada}.*Status.*Invited → Scheduled`));
    expect(rows[2]).toMatch(new RegExp(`${ada}.*Status.*Not started → Invited`));
    expect(rows[3]).toMatch(/The study.*Status.*Draft → Active/);
    expect(rows[4]).toMatch(/The study.*Status.*created as Draft/);
    await expectAccessible(page);

    // A move made elsewhere arrives with "Check for newer events", from the cursor kept.
    unwrap(
      await world.api().PATCH('/studies/{studyId}/participants/{participantId}', {
        params: { path: { studyId, participantId: participants[0]!.participantId } },
        body: { status: 'COMPLETED' },
      }),
    );
    expect(await checkForNewerEventsUntil(page, async () => (await feed.count()) === 6)).toBe('1 newer event.');
    expect((await feed.first().textContent())!.replace(/\s+/g, ' ')).toMatch(/Scheduled → Completed/);
    expectNoPageErrors(world, page, [/status of 409/]);
  });

  it('offers the moves of a survey (no sessions), none that reach out while the study is a draft, and unhides to the status the participant had', async () => {
    const email = 'cleo.survey@example.org';
    const { studyId, participants } = await seedStudy('Draft survey', 'SURVEY', [email], false);
    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    await openStudy(page, studyId, 'Draft survey');
    expect(await offeredMoves(page, email)).toEqual(['Mark canceled', 'Hide', 'Approve', 'Reject']);
    await page.getByRole('button', { name: 'Launch' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    await expect.poll(() => offeredMoves(page, email)).toEqual(['Invite', 'Mark canceled', 'Hide', 'Approve', 'Reject']);
    await move(page, email, 'Invite');
    // A survey is completed from INVITED: no schedule, no no-show.
    await expect.poll(() => offeredMoves(page, email)).toEqual(['Mark completed', 'Mark canceled', 'Hide', 'Approve', 'Reject']);
    // Hidden, the participant may only return to the status it had: INVITED (its statusBeforeHidden).
    await move(page, email, 'Hide');
    await expect.poll(() => offeredMoves(page, email)).toEqual(['Unhide', 'Approve', 'Reject']);
    await move(page, email, 'Unhide');
    await expect.poll(() => offeredMoves(page, email)).toEqual(['Mark completed', 'Mark canceled', 'Hide', 'Approve', 'Reject']);
    expect((await participantOf(studyId, participants[0]!.participantId)).status).toBe('INVITED');
    await expectAccessible(page);
    // The row names the person, with the email beneath; the name leads to the person's page.
    const who = rowOf(page, 'Participants', email).locator('td').first();
    expect((await who.textContent())!.replace(/\s+/g, ' ').trim()).toBe(`Cleo Survey ${email}`);
    await who.getByRole('link', { name: 'Cleo Survey', exact: true }).click();
    await page.getByRole('heading', { name: 'Properties' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/people\/per_/);
    expectNoPageErrors(world, page);
  });

  /** The incentives the API has for a study, as the test reads them. */
  const incentivesOf = async (studyId: string) => unwrap(await world.api().POST('/incentives/search', { body: { studyId } })).results;
  const money = (cents: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(cents / 100);
  const focused = (page: Page) => page.evaluate<string | undefined>('document.activeElement?.textContent?.trim()');

  it('sends an incentive only once a dialog naming the amount, the person and the study is confirmed: cancelled, nothing is sent', async () => {
    const email = 'gus.confirmed@example.org';
    const { studyId, participants } = await seedStudy('Confirmed incentive study', 'INTERVIEWS', [email], false);
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await openStudy(page, studyId, 'Confirmed incentive study');
    await page.getByRole('button', { name: `Send incentive: ${email}` }).click();
    await page.getByRole('heading', { name: `Send an incentive to Gus Confirmed (${email})` }).waitFor();
    // No amount is filled in for the person.
    expect(await page.getByLabel('Amount (USD)').inputValue()).toBe('');
    await page.getByLabel('Amount (USD)').fill('75.5');
    await page.getByRole('button', { name: 'Send incentive…' }).click();

    // The dialog says what would be sent, to whom, for which study; the focus is in it, on "Don’t send".
    const dialog = page.getByRole('dialog', { name: 'Send this incentive?' });
    await dialog.waitFor();
    expect((await dialog.getByTestId('incentive-confirmation').textContent())!.replace(/\s+/g, ' ')).toBe(
      `Send ${money(7550)} (USD) to Gus Confirmed (${email}) for the study Confirmed incentive study.`,
    );
    await expect.poll(() => focused(page)).toBe('Don’t send');
    await expectAccessible(page);

    // Cancelled: by the button, then by Escape. Nothing is sent, and the focus is back on the form's button.
    await dialog.getByRole('button', { name: 'Don’t send' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => focused(page)).toBe('Send incentive…');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await incentivesOf(studyId)).toEqual([]);

    // Confirmed, from the keyboard: exactly one incentive, of that amount, to that participant.
    await page.getByRole('button', { name: 'Send incentive…' }).click();
    await dialog.getByRole('button', { name: `Send ${money(7550)}` }).focus();
    await page.keyboard.press('Enter');
    await rowOf(page, 'Incentives', email).getByText('Unclaimed', { exact: true }).waitFor();
    expect((await incentivesOf(studyId)).map(({ participantId, amountCents, type }) => ({ participantId, amountCents, type }))).toEqual([
      { participantId: participants[0]!.participantId, amountCents: 7550, type: 'MONEY_OR_GIFT_CARD' },
    ]);
    // The recipient by name, with the email.
    expect((await rowOf(page, 'Incentives', email).locator('td').first().textContent())!.replace(/\s+/g, ' ').trim()).toBe(`Gus Confirmed ${email}`);
    expectNoPageErrors(world, page);
  });

  it('sends an incentive (an amount missing, then one the API refuses, beside the field first), resends and cancels it while the study is a draft', async () => {
    const email = 'dora.incentive@example.org';
    const { studyId, participants } = await seedStudy('Incentive draft study', 'UNMODERATED_TEST', [email], false);
    const page = await world.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page, world.users.RESEARCHER.token);
    await openStudy(page, studyId, 'Incentive draft study');

    await page.getByRole('button', { name: `Send incentive: ${email}` }).click();
    await page.getByRole('heading', { name: `Send an incentive to Dora Incentive (${email})` }).waitFor();
    await expectAccessible(page);
    // Money without an amount: said beside the amount, and nothing to confirm.
    const send = page.getByRole('button', { name: 'Send incentive…' });
    await send.click();
    const amount = page.getByLabel('Amount (USD)');
    await expect.poll(() => amount.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await amount.getAttribute('aria-describedby'))!.split(' ').pop()!;
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/Give the amount to send/);
    expect(await page.getByRole('dialog').count()).toBe(0);
    await expectAccessible(page);
    // An amount the API refuses (nothing): confirmed, its 400 names amountCents, shown beside the amount.
    const dialog = page.getByRole('dialog', { name: 'Send this incentive?' });
    await amount.fill('0');
    await send.click();
    await dialog.getByRole('button', { name: `Send ${money(0)}` }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(async () => page.locator(`[id="${(await amount.getAttribute('aria-describedby'))!.split(' ').pop()!}"]`).textContent()).toMatch(/amountCents/);
    expect(await incentivesOf(studyId)).toEqual([]);

    await amount.fill('25,50');
    await send.click();
    await dialog.getByRole('button', { name: `Send ${money(2550)}` }).click();
    const row = rowOf(page, 'Incentives', email);
    await row.getByText('Unclaimed', { exact: true }).waitFor();
    expect(await row.textContent()).toContain(money(2550));
    const sent = await incentivesOf(studyId);
    expect(sent.map(({ participantId, amountCents, type, status }) => ({ participantId, amountCents, type, status }))).toEqual([
      { participantId: participants[0]!.participantId, amountCents: 2550, type: 'MONEY_OR_GIFT_CARD', status: 'UNCLAIMED' },
    ]);

    await row.getByRole('button', { name: `Resend incentive: ${email}` }).click();
    await row.getByText('The claim email was sent again.').waitFor();
    await row.getByRole('button', { name: `Cancel incentive: ${email}` }).click();
    await row.getByText('Canceled', { exact: true }).waitFor();
    expect(unwrap(await world.api().GET('/incentives/{incentiveId}', { params: { path: { incentiveId: sent[0]!.incentiveId } } })).status).toBe('CANCELED');
    // A canceled incentive offers nothing more.
    expect(await row.getByRole('button').count()).toBe(0);

    // A CUSTOM reward without an amount, said in words.
    await page.getByRole('button', { name: `Send incentive: ${email}` }).click();
    await page.getByLabel('Type').selectOption('CUSTOM');
    await page.getByLabel('What is given').fill('A tote bag');
    await page.getByRole('button', { name: 'Send incentive…' }).click();
    expect((await dialog.getByTestId('incentive-confirmation').textContent())!.replace(/\s+/g, ' ')).toBe(
      `Send A tote bag to Dora Incentive (${email}) for the study Incentive draft study.`,
    );
    await dialog.getByRole('button', { name: 'Send A tote bag' }).click();
    await rowOf(page, 'Incentives', 'A tote bag').getByText('Sent', { exact: true }).waitFor();
    await expectAccessible(page);
    expectNoPageErrors(world, page, [/status of 400/]);
  });

  it('sends from a budget in its currency, and shows an incentive waiting for approval, approved by a second person with the right', async () => {
    const email = 'hal.approval@example.org';
    const { studyId, participants } = await seedStudy('Approval incentive study', 'SURVEY', [email]);
    const api = world.api();
    const budget = unwrap(await api.POST('/incentive-budgets', { body: { name: 'Euro pot', currency: 'EUR', limitCents: 100_000 } }));
    unwrap(await api.PUT('/incentive-approval-settings', { body: { thresholds: [{ currency: 'EUR', amountCents: 5000 }] } }));

    // The researcher picks the budget: the currency follows it, and the confirmation names it.
    const researcher = await world.newPage();
    await signIn(researcher, world.users.RESEARCHER.token);
    await openStudy(researcher, studyId, 'Approval incentive study');
    await researcher.getByRole('button', { name: `Send incentive: ${email}` }).click();
    await researcher.getByLabel('Budget').selectOption(budget.budgetId);
    await researcher.getByLabel('Amount (EUR)').fill('80');
    await researcher.getByRole('button', { name: 'Send incentive…' }).click();
    const dialog = researcher.getByRole('dialog', { name: 'Send this incentive?' });
    const euros = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(80);
    expect((await dialog.getByTestId('incentive-confirmation').textContent())!.replace(/\s+/g, ' ')).toBe(
      `Send ${euros} (EUR) to Hal Approval (${email}) for the study Approval incentive study.`,
    );
    await dialog.getByRole('button', { name: `Send ${euros}` }).click();
    const row = rowOf(researcher, 'Incentives', email);
    await row.getByText('Waiting for approval', { exact: true }).waitFor();
    // The researcher may not approve (no right): nothing offered.
    expect(await row.getByRole('button', { name: /Approve/ }).count()).toBe(0);
    const [sent] = unwrap(await api.POST('/incentives/search', { body: { studyId } })).results;
    expect(sent).toMatchObject({ participantId: participants[0]!.participantId, amountCents: 8000, currency: 'EUR', budgetId: budget.budgetId, approval: { state: 'PENDING' } });

    // An ops manager approves it: ordered, its status the reference's.
    const ops = await world.newPage();
    ops.on('dialog', (prompt) => void prompt.accept());
    await signIn(ops, world.users.OPS_MANAGER.token);
    await openStudy(ops, studyId, 'Approval incentive study');
    const opsRow = rowOf(ops, 'Incentives', email);
    await opsRow.getByRole('button', { name: `Approve incentive: ${email}` }).click();
    await opsRow.getByText('Unclaimed', { exact: true }).waitFor();
    await expectAccessible(ops);
    expect(unwrap(await api.GET('/incentives/{incentiveId}', { params: { path: { incentiveId: sent!.incentiveId } } })).approval).toMatchObject({
      state: 'APPROVED',
      decidedByUserId: world.users.OPS_MANAGER.userId,
    });
    expectNoPageErrors(world, researcher);
    expectNoPageErrors(world, ops);
  });

  it('offers no cancel or resend once the study is launched', async () => {
    const email = 'eli.launched@example.org';
    const { studyId, participants } = await seedStudy('Launched incentive study', 'SURVEY', [email]);
    unwrap(await world.api().POST('/incentives', { body: { participantId: participants[0]!.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1000 } }));
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await openStudy(page, studyId, 'Launched incentive study');
    await rowOf(page, 'Incentives', email).getByText('Unclaimed', { exact: true }).waitFor();
    expect(await rowOf(page, 'Incentives', email).getByRole('button').count()).toBe(0);
    await page.getByText('Incentives can be canceled or resent only while their study is a draft.').waitFor();
    expectNoPageErrors(world, page);
  });

  it('offers an OBSERVER no move, no send and no cancel, and shows the feed', async () => {
    const email = 'finn.observed@example.org';
    const { studyId, participants } = await seedStudy('Observed participants', 'INTERVIEWS', [email], false);
    unwrap(await world.api().POST('/incentives', { body: { participantId: participants[0]!.participantId, type: 'CUSTOM', customIncentiveValue: 'Book voucher' } }));
    const page = await world.newPage();
    await signIn(page, world.users.OBSERVER.token);
    await openStudy(page, studyId, 'Observed participants');
    await rowOf(page, 'Incentives', email).getByText('Sent', { exact: true }).waitFor();
    expect(await page.getByRole('table', { name: 'Participants' }).getByRole('button').count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Participants' }).getByRole('combobox').count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Incentives' }).getByRole('button').count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
    await expectAccessible(page);

    await page.getByRole('link', { name: 'Status events of this study' }).click();
    await page.getByRole('heading', { name: 'Status events: Observed participants' }).waitFor();
    await checkForNewerEventsUntil(page, () => page.getByText('created as').isVisible());
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });
});
