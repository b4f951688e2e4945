import { createClient, unwrap } from '@recruit-ops/sdk';

/**
 * README.md's first requests with the SDK. Each `#region` below is shown in docs/api/sdk.md as
 * it is here; test/sdk-walkthrough.test.ts checks that the page shows these regions unchanged and
 * runs this function against the compiled server on both stores. `API` and `TOKEN` are the
 * README's shell variables of the same names.
 */
export async function walkthrough(API: string, TOKEN: string) {
  // #region first-request
  const api = createClient({ baseUrl: API, token: TOKEN });

  // Who am I?
  const me = unwrap(await api.GET('/me'));

  // Create a study (it starts in DRAFT)
  const { studyId } = unwrap(
    await api.POST('/studies', {
      body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews', participationLimit: 12 } },
    }),
  );
  const study = { params: { path: { studyId } } };

  // Give it a screener, change the plan, read it back
  unwrap(await api.PUT('/studies/{studyId}/screener', { ...study, body: { questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] } }));
  unwrap(await api.PATCH('/studies/{studyId}', { ...study, body: { studyPlan: { incentive: { amount: 75 }, language: 'en' } } }));
  console.log(unwrap(await api.GET('/studies/{studyId}', study)));

  // Launch it, pause it, list studies that are paused (paginate follows the cursors, page after page)
  unwrap(await api.POST('/studies/{studyId}/launch', study));
  unwrap(await api.POST('/studies/{studyId}/status', { ...study, body: { status: 'PAUSED' } }));
  for await (const paused of api.paginate('/studies', { params: { query: { status: 'PAUSED', size: 10 } } })) {
    console.log(paused.studyId, paused.studyPlan.name);
  }
  // #endregion

  // #region import
  const csv = 'email,firstName,lastName\ngrace@example.org,Grace,Hopper\n'; // or readFileSync('people.csv', 'utf8')
  const { importId } = unwrap(await api.POST('/imports', { body: csv }));
  const importPath = { params: { path: { importId } } };
  let imported = unwrap(await api.GET('/imports/{importId}', importPath));
  while (imported.status === 'QUEUED' || imported.status === 'RUNNING') {
    await new Promise((resolve) => setTimeout(resolve, 1000)); // QUEUED → RUNNING → COMPLETED
    imported = unwrap(await api.GET('/imports/{importId}', importPath));
  }
  const byEmail = [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: 'example.org' }];
  for await (const person of api.paginate('/people/search', { body: { filter: { filters: byEmail } } })) {
    console.log(person.personId, person.email);
  }
  // #endregion

  // #region participants
  const [person] = unwrap(await api.POST('/people/search', { body: {} })).results;
  const added = unwrap(await api.POST('/studies/{studyId}/participants', { ...study, body: { personIds: [person!.personId] } }));
  const participant = { params: { path: { studyId, participantId: added.results[0]!.participantId } } };
  // The study is PAUSED above: launch it again to invite (inviting needs an ACTIVE study)
  unwrap(await api.POST('/studies/{studyId}/launch', study));
  unwrap(await api.PATCH('/studies/{studyId}/participants/{participantId}', { ...participant, body: { status: 'INVITED' } }));
  unwrap(await api.PATCH('/studies/{studyId}/participants/{participantId}', { ...participant, body: { status: 'SCHEDULED', interviewStartTime: '2026-12-03T15:00:00Z' } }));
  // E1: invited or scheduled participants with fewer than 2 interviews in the last 90 days, latest contact first
  const e1 = api.paginate('/studies/{studyId}/participants/search', {
    ...study,
    body: {
      filter: {
        filters: [
          { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED', 'SCHEDULED'] },
          { property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90' }, comparison: 'LESS_THAN', value: 2 },
        ],
        sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' },
      },
      pageInfo: { size: 25 },
    },
  });
  for await (const found of e1) console.log(found.participantId, found.status, found.interviewStartTime);
  // Every status change, oldest first: keep the last page's endCursor and pass it as startCursor next time
  let participantEventsCursor: string | undefined;
  for await (const page of api.pages('/participant-status-events', { params: { query: { studyId, size: 100 } } })) {
    for (const event of page.results) console.log(event.occurredAt, event.field, event.from, '→', event.to);
    participantEventsCursor = page.pageInfo.endCursor;
  }
  // #endregion

  // #region signups
  const { populationId } = unwrap(await api.POST('/populations', { body: { name: 'Newsletter signups' } }));
  const { signupFormId } = unwrap(await api.POST('/signups', { body: { name: 'Join our panel', populationId } }));
  // What the form's page posts: no token (the form id names the workspace), limited per client address
  const visitor = createClient({ baseUrl: API });
  const submitted = unwrap(
    await visitor.POST('/public/signups/{signupFormId}/submissions', {
      params: { path: { signupFormId } },
      body: { email: 'ada@example.org', firstName: 'Ada', referralCode: 'SPRING-NEWSLETTER' },
    }),
  );
  // Every study status change, oldest first
  for await (const event of api.paginate('/study-status-events', { params: { query: { size: 100 } } })) {
    console.log(event.occurredAt, event.studyId, event.from, '→', event.to);
  }
  // #endregion

  // #region incentives
  // Resend and cancel need the incentive's study in DRAFT (the reference's rule): pay a participant of a draft study
  const draft = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Pilot' } } }));
  const pilot = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: draft.studyId } }, body: { personIds: [person!.personId] } }));
  // Every POST carries a new Idempotency-Key, the same on the SDK's own retries (429, 503). To retry
  // later yourself (after a crash, say), choose the key, keep it, and send it again
  const key = crypto.randomUUID();
  const order = { participantId: pilot.results[0]!.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 7500 } as const;
  const incentive = unwrap(await api.POST('/incentives', { params: { header: { 'Idempotency-Key': key } }, body: order }));
  console.log(incentive); // { incentiveId: 'inc_…', status: 'UNCLAIMED', … }
  const again = await api.POST('/incentives', { params: { header: { 'Idempotency-Key': key } }, body: order });
  console.log(again.data?.incentiveId === incentive.incentiveId, again.response.headers.get('Idempotent-Replayed')); // true 'true': paid once
  const incentivePath = { params: { path: { incentiveId: incentive.incentiveId } } };
  console.log(unwrap(await api.POST('/incentives/{incentiveId}/resend', incentivePath))); // { success: true, incentiveId: 'inc_…' }
  unwrap(await api.POST('/incentives/{incentiveId}/cancel', incentivePath)); // voided at the provider, then CANCELED
  console.log(unwrap(await api.GET('/incentives/{incentiveId}', incentivePath)).status); // CANCELED
  // Errors come typed in `error`; unwrap throws them as a RecruitApiError (status, errors: [{ message, path }])
  const { error } = await api.POST('/incentives/{incentiveId}/resend', incentivePath);
  console.log(error); // { errors: [ { message: '…', path: [ 'incentiveId' ] } ] }: a canceled incentive is not resent
  // #endregion

  return { me, studyId, importId, imported, person, participant, participantEventsCursor, submitted, incentive, again, error };
}
