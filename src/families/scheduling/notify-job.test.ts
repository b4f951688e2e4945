import { auditEntriesOf } from '../../../test/audit-entries.js';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BookingWorld, cancelBooking, createBookingWorld, moveBooking } from '../../../test/booking-rows-factory.js';
import { createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { type ReceivedMail, type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { translator } from '../../participant/i18n.js';

/**
 * The booking.notify job end to end: rows inserted as the booking service writes them, the job
 * run by the service's runner, the messages received by a real SMTP server and their invitations
 * parsed back with ical.js.
 */
let receiver: SmtpReceiver;
let service: TestService;

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startTestService(smtpConfig(receiver));
});

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
});

const runJobs = (tenant: Tenant) => service.jobs.runDue({ workspaceId: tenant.workspaceId });
const notifyOutcomes = async (tenant: Tenant) => (await runJobs(tenant)).jobs.filter((job) => job.queue === 'booking.notify').map((job) => job.outcome);
const jobResults = (tenant: Tenant) =>
  service.deps.db.selectFrom('jobs').select(['singleton_key', 'result']).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'booking.notify').orderBy('job_id').execute();

/** The invitation a message carries: its text/calendar alternative (method in its Content-Type) and its .ics attachment, the same text. */
function invitationOf(mail: ReceivedMail) {
  const alternative = /Content-Type: text\/calendar; charset=utf-8; method=(REQUEST|CANCEL)/i.exec(mail.raw.replace(/\r?\n[ \t]+/g, ' '));
  expect(alternative, 'a text/calendar alternative').not.toBeNull();
  const attachment = mail.parsed.attachments.find((part) => part.contentType === 'application/ics');
  expect(attachment, 'an .ics attachment').toBeDefined();
  expect(attachment!.filename).toMatch(/\.ics$/);
  const text = attachment!.content.toString('utf8');
  const calendar = new ICAL.Component(ICAL.parse(text));
  const vevent = calendar.getFirstSubcomponent('vevent')!;
  return { contentTypeMethod: alternative![1]!.toUpperCase(), method: calendar.getFirstPropertyValue('method'), event: new ICAL.Event(vevent), vevent, text };
}

const sessionStart = async (tenant: Tenant, world: BookingWorld) =>
  (await service.deps.db.selectFrom('sessions').select('starts_at').where('workspace_id', '=', tenant.workspaceId).where('session_id', '=', world.sessionId).executeTakeFirstOrThrow()).starts_at;

const linkPath = (text: string) => /https:\/\/recruit\.example\.test(\/p\/[A-Za-z0-9_-]{43})/.exec(text)?.[1];

describe('booking invitations by email', () => {
  it('sends the person and the host one message each, with the invitation as a REQUEST alternative and an .ics, the time in the person\'s zone and a SCHEDULING link', async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z', personTimeZone: 'Europe/Berlin', hostTimeZone: 'Europe/London' });
    expect(await notifyOutcomes(tenant)).toEqual(['completed']);
    // The trail: the service sent the booking's invitation to each, once.
    for (const operation of ['sendBookingInvitationToPerson', 'sendBookingInvitationToHost']) {
      expect(await auditEntriesOf(service.deps.db, tenant.workspaceId, operation)).toEqual([{ actor_kind: 'SERVICE', actor_service: 'booking.notify', resource_type: 'booking', resource_id: world.bookingId, after_state: null }]);
    }

    const [toPerson, ...morePerson] = receiver.to(world.personEmail);
    expect(morePerson).toEqual([]);
    const i18n = translator('en');
    const berlin = i18n.dateTime('2027-01-11T09:00:00.000Z', 'Europe/Berlin');
    expect(berlin).toContain('10:00');
    expect(toPerson!.parsed.subject).toBe(`Your session for Shopping habits interview: ${berlin}`);
    expect(toPerson!.parsed.text).toContain(`is booked for ${berlin} (60 minutes), with Hana Host`);
    expect(toPerson!.raw).not.toMatch(/^List-Unsubscribe:/m);
    const path = linkPath(toPerson!.parsed.text ?? '');
    expect(path).toBeDefined();
    const invitation = invitationOf(toPerson!);
    expect(invitation.contentTypeMethod).toBe('REQUEST');
    expect(invitation.method).toBe('REQUEST');
    expect(invitation.event.uid).toBe(`${world.bookingId}@recruit.example.test`);
    expect(invitation.event.sequence).toBe(0);
    expect(invitation.event.startDate.toJSDate().toISOString()).toBe(await sessionStart(tenant, world));
    expect(invitation.event.summary).toBe('Shopping habits interview');
    expect(invitation.event.description).toContain(`https://recruit.example.test${path}`);
    expect(String(invitation.vevent.getFirstProperty('organizer')!.getFirstValue()).toLowerCase()).toBe(`mailto:${world.hostEmail}`);
    expect(String(invitation.vevent.getFirstProperty('attendee')!.getFirstValue()).toLowerCase()).toBe(`mailto:${world.personEmail}`);

    // The link opens the participant's SCHEDULING link, bound to this participant.
    const links = await service.deps.db.selectFrom('participant_links').select(['purpose', 'participant_id']).where('workspace_id', '=', tenant.workspaceId).execute();
    expect(links).toEqual([{ purpose: 'SCHEDULING', participant_id: world.participantId }]);

    const [toHost, ...moreHost] = receiver.to(world.hostEmail);
    expect(moreHost).toEqual([]);
    const london = i18n.dateTime('2027-01-11T09:00:00.000Z', 'Europe/London');
    expect(toHost!.parsed.subject).toBe(`Booked: Shopping habits interview, ${london}`);
    expect(toHost!.parsed.text).toContain('Participant: Ana Participant');
    expect(linkPath(toHost!.raw)).toBeUndefined();
    const hostInvitation = invitationOf(toHost!);
    expect(hostInvitation.event.uid).toBe(invitation.event.uid);
    expect(hostInvitation.event.sequence).toBe(0);
    expect(hostInvitation.event.description).not.toContain('/p/');

    // A second run of the same job (a retry, an instance racing) sends nothing more.
    await service.deps.db.updateTable('jobs').set({ state: 'queued', run_after: new Date(0).toISOString() }).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'booking.notify').execute();
    expect(await notifyOutcomes(tenant)).toEqual(['completed']);
    expect(receiver.to(world.personEmail)).toHaveLength(1);
    expect(receiver.to(world.hostEmail)).toHaveLength(1);
    const [job] = await jobResults(tenant);
    expect(job!.result).toEqual({ person: { sent: false, reason: 'ALREADY_SENT' }, host: { sent: false, reason: 'ALREADY_SENT' } });
  });

  it.each([
    ['Asia/Kathmandu', 'de', '2027-01-11T09:00:00.000Z', '14:45'],
    ['Europe/Berlin', 'fr', '2027-03-28T00:30:00.000Z', '01:30'],
    ['Europe/Berlin', 'fr', '2027-03-28T01:30:00.000Z', '03:30'],
  ])("writes the person's message in the study's language with the time in their zone (%s, %s, %s)", async (zone, language, startsAt, wall) => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt, personTimeZone: zone, language, hostTimeZone: 'America/New_York' });
    expect(await notifyOutcomes(tenant)).toEqual(['completed']);
    const [mail] = receiver.to(world.personEmail);
    const local = translator(language as 'de').dateTime(startsAt, zone);
    expect(local).toContain(wall);
    expect(mail!.parsed.text).toContain(local);
    expect(mail!.parsed.text).toContain(language === 'de' ? 'Ihr Termin für Shopping habits interview ist gebucht' : 'votre rendez-vous pour Shopping habits interview est réservé');
    const { event } = invitationOf(mail!);
    expect(event.startDate.toJSDate().toISOString()).toBe(startsAt);
    // The host reads the same instant in their own zone.
    const [hostMail] = receiver.to(world.hostEmail);
    expect(hostMail!.parsed.subject).toContain(translator(language as 'de').dateTime(startsAt, 'America/New_York'));
  });

  it("falls back to the host's zone when the booking recorded none", async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z', personTimeZone: null, hostTimeZone: 'Asia/Kathmandu' });
    await runJobs(tenant);
    expect(receiver.to(world.personEmail)[0]!.parsed.text).toContain(translator('en').dateTime('2027-01-11T09:00:00.000Z', 'Asia/Kathmandu'));
  });

  it('sends only the latest of two quick moves (same UID, raised SEQUENCE); the superseded job sends nothing', async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z' });
    await runJobs(tenant);
    const first = invitationOf(receiver.to(world.personEmail)[0]!).event;

    expect(await moveBooking(service, tenant, world, '2027-01-12T09:00:00.000Z')).toBe(1);
    expect(await moveBooking(service, tenant, world, '2027-01-13T15:00:00.000Z')).toBe(2);
    expect(await notifyOutcomes(tenant)).toEqual(['completed', 'completed']);
    const results = await jobResults(tenant);
    expect(results.map((row) => [row.singleton_key, row.result])).toEqual([
      [`${world.bookingId}:0:REQUEST`, expect.objectContaining({ person: expect.objectContaining({ sent: true }) })],
      [`${world.bookingId}:1:REQUEST`, { sent: false, reason: 'SUPERSEDED' }],
      [`${world.bookingId}:2:REQUEST`, expect.objectContaining({ person: expect.objectContaining({ sent: true }), host: { sent: true } })],
    ]);
    const mails = receiver.to(world.personEmail);
    expect(mails).toHaveLength(2);
    const moved = invitationOf(mails[1]!);
    expect(moved.method).toBe('REQUEST');
    expect(moved.event.uid).toBe(first.uid);
    expect(moved.event.sequence).toBe(2);
    expect(moved.event.startDate.toJSDate().toISOString()).toBe('2027-01-13T15:00:00.000Z');
    expect(mails[1]!.parsed.subject).toContain('has moved to');
    expect(receiver.to(world.hostEmail)[1]!.parsed.subject).toMatch(/^Moved: /);
  });

  it('sends a CANCEL (METHOD:CANCEL, STATUS:CANCELLED, the latest SEQUENCE, no link) to both, and no REQUEST of a booking canceled since', async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z' });
    await runJobs(tenant);
    await moveBooking(service, tenant, world, '2027-01-12T09:00:00.000Z');
    expect(await cancelBooking(service, tenant, world)).toBe(2);
    expect(await notifyOutcomes(tenant)).toEqual(['completed', 'completed']);
    const results = await jobResults(tenant);
    expect(results[1]).toEqual({ singleton_key: `${world.bookingId}:1:REQUEST`, result: { sent: false, reason: 'CANCELED_SINCE' } });

    for (const address of [world.personEmail, world.hostEmail]) {
      const mails = receiver.to(address);
      expect(mails).toHaveLength(2);
      const canceled = invitationOf(mails[1]!);
      expect(canceled.contentTypeMethod).toBe('CANCEL');
      expect(canceled.method).toBe('CANCEL');
      expect(canceled.vevent.getFirstPropertyValue('status')).toBe('CANCELLED');
      expect(canceled.event.uid).toBe(`${world.bookingId}@recruit.example.test`);
      expect(canceled.event.sequence).toBe(2);
      expect(canceled.event.startDate.toJSDate().toISOString()).toBe('2027-01-12T09:00:00.000Z');
      expect(linkPath(mails[1]!.raw)).toBeUndefined();
    }
    expect(receiver.to(world.personEmail)[1]!.parsed.subject).toMatch(/is canceled$/);
    // Only the first message's link was made.
    expect(await service.deps.db.selectFrom('participant_links').select('link_id').where('workspace_id', '=', tenant.workspaceId).execute()).toHaveLength(1);
  });

  it('still sends the cancellation to a person who opted out of contact, and nothing to an address that bounced for good', async () => {
    const tenant = await createTenant(service);
    const optedOut = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z', enqueue: false });
    await service.deps.db.updateTable('people').set({ is_opted_out: true }).where('workspace_id', '=', tenant.workspaceId).where('person_id', '=', optedOut.personId).execute();
    await cancelBooking(service, tenant, optedOut);
    const bounced = await createBookingWorld(service, tenant, { startsAt: '2027-01-12T09:00:00.000Z', enqueue: false });
    await service.deps.db.updateTable('people').set({ contact_status: 'UNREACHABLE' }).where('workspace_id', '=', tenant.workspaceId).where('person_id', '=', bounced.personId).execute();
    await cancelBooking(service, tenant, bounced);
    expect(await notifyOutcomes(tenant)).toEqual(['completed', 'completed']);
    expect(receiver.to(optedOut.personEmail).map((mail) => invitationOf(mail).method)).toEqual(['CANCEL']);
    expect(receiver.to(bounced.personEmail)).toEqual([]);
    expect(receiver.to(bounced.hostEmail)).toHaveLength(1);
  });

  it('sends nothing for a booking that is rebooked after its CANCEL job was queued', async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z', enqueue: false });
    await cancelBooking(service, tenant, world);
    await service.deps.db.updateTable('bookings').set((eb) => ({ status: 'BOOKED', sequence: eb('sequence', '+', 1) })).where('workspace_id', '=', tenant.workspaceId).where('booking_id', '=', world.bookingId).execute();
    expect(await notifyOutcomes(tenant)).toEqual(['completed']);
    expect((await jobResults(tenant))[0]!.result).toEqual({ sent: false, reason: 'NO_LONGER_CANCELED' });
    expect(receiver.to(world.personEmail)).toEqual([]);
  });

  it('retries after an SMTP 4xx and then sends only the missing message, with one working link', async () => {
    const tenant = await createTenant(service);
    const world = await createBookingWorld(service, tenant, { startsAt: '2027-01-11T09:00:00.000Z' });
    // The person's message goes first: it meets the refusal; the host's goes through.
    receiver.refuseNextData(1, { code: 451, message: 'Try again later' });
    expect(await notifyOutcomes(tenant)).toEqual(['retrying']);
    expect(receiver.to(world.personEmail)).toEqual([]);
    expect(receiver.to(world.hostEmail)).toHaveLength(1);
    expect(await service.deps.db.selectFrom('participant_links').select('link_id').where('workspace_id', '=', tenant.workspaceId).execute()).toEqual([]);

    await service.deps.db.updateTable('jobs').set({ run_after: new Date(0).toISOString() }).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'booking.notify').execute();
    expect(await notifyOutcomes(tenant)).toEqual(['completed']);
    expect(receiver.to(world.personEmail)).toHaveLength(1);
    expect(receiver.to(world.hostEmail)).toHaveLength(1);
    const links = await service.deps.db.selectFrom('participant_links').select('link_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(links).toHaveLength(1);
    const sent = await service.deps.db.selectFrom('booking_notifications').select(['recipient', 'link_id']).where('workspace_id', '=', tenant.workspaceId).orderBy('recipient').execute();
    expect(sent).toEqual([
      { recipient: 'HOST', link_id: null },
      { recipient: 'PERSON', link_id: links[0]!.link_id },
    ]);
  });
});
