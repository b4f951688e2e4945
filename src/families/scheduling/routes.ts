import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse } from '../../http/schemas.js';
import {
  Booking,
  BookingList,
  BookingParams,
  BookingsQuery,
  CancelBookingBody,
  CreateBookingBody,
  MoveBookingBody,
  PutStudyScheduleBody,
  SlotList,
  SlotsQuery,
  StudyParams,
  StudySchedule,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Scheduling'];
const guide = 'Guide: docs/api/scheduling.md.';
const studyNotFound = errorResponse("Study not found (also for another workspace's study).");
const bookingNotFound = errorResponse("Study or booking not found (also another workspace's); `path` names which.");
const rules =
  'A time is open when it lies in a host\'s hours (weekly hours or that date\'s override, in the host\'s time zone), starts at least minimumNoticeMinutes from now and within horizonDays, ' +
  "keeps clear of the host's other booked sessions in every study of the workspace with both sides' buffers, stays within the daily cap, and has a place left (capacity). " +
  'A place is taken exactly once under concurrency, on one instance or several.';

export const schedulingRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.get(
    '/studies/:studyId/schedule',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'getStudySchedule',
        summary: "Get a study's schedule",
        description: `How the study's sessions are booked: the rules and the hosts with their hours. A study never set answers the defaults and no host. ${guide}`,
        tags,
        params: StudyParams,
        response: { 200: Type.Ref(StudySchedule), 404: studyNotFound },
      },
    },
    async (request) => service.getSchedule(context(request), request.params.studyId),
  );

  app.put(
    '/studies/:studyId/schedule',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'putStudySchedule',
        summary: "Set a study's schedule",
        description:
          'Sets the rules (fields left out keep their value, or the default) and replaces the hosts. Bookings made keep their sessions; the new rules apply to times booked from now on. ' +
          `The study must be INTERVIEWS or GROUP_INTERVIEW. ${rules} ${guide}`,
        tags,
        params: StudyParams,
        body: PutStudyScheduleBody,
        response: {
          200: Type.Ref(StudySchedule),
          400: errorResponse('Invalid input; `path` names the field, e.g. ["hosts","0","weeklyHours","MONDAY","1","start"] for hours that overlap, or ["hosts","0","timeZone"] for an unknown zone.'),
          404: errorResponse("Study not found, or a host that is not an ACTIVE user of the workspace (`path` names it)."),
          409: errorResponse('The study is not an interview study.'),
        },
      },
    },
    async (request) => service.putSchedule(context(request), request.params.studyId, request.body),
  );

  app.get(
    '/studies/:studyId/slots',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'listStudySlots',
        summary: "List a study's open times",
        description: `The times a session can be booked at now, in start order, each with its host and the places left, shown in the zone asked for and in the host's. ${rules} ${guide}`,
        tags,
        params: StudyParams,
        querystring: SlotsQuery,
        response: { 200: SlotList, 400: errorResponse('Invalid input: an unknown time zone, a window that ends before it starts or is too long; `path` names the parameter.'), 404: studyNotFound },
      },
    },
    async (request) => service.listSlots(context(request), request.params.studyId, request.query),
  );

  app.get(
    '/studies/:studyId/bookings',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'listStudyBookings',
        summary: "List a study's bookings",
        description: `The study's bookings, live and canceled, in id (creation) order, keyset-paged; or those of one status. ${guide}`,
        tags,
        params: StudyParams,
        querystring: BookingsQuery,
        response: { 200: BookingList, 400: errorResponse('Invalid input (size, status, or a startCursor not of this query); `path` names the parameter.'), 404: studyNotFound },
      },
    },
    async (request) => {
      const call = context(request);
      const { studyId } = request.params;
      const scope = cursorScope(call.workspaceId, `bookings:${JSON.stringify([studyId, request.query.status ?? null])}`);
      return listPage(deps.cursors, scope, request.query, (booking) => booking.bookingId, (after, size) => service.listBookings(call, studyId, request.query.status, after, size));
    },
  );

  app.post(
    '/studies/:studyId/bookings',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'createStudyBooking',
        summary: 'Book a session for a participant',
        description:
          'Books the participant into an open time, as the person would on their page: the participant becomes SCHEDULED at that time (a status event and `participant.status_changed`), `booking.created` is sent, and the person and the host receive a calendar invitation. ' +
          `${rules} Setting interviewStartTime with PATCH instead records a time arranged elsewhere: it holds no place and sends no invitation. ${guide}`,
        tags,
        params: StudyParams,
        body: CreateBookingBody,
        response: {
          201: Type.Ref(Booking),
          400: errorResponse('Invalid input; `path` names the field.'),
          404: errorResponse('Study, participant or host (a user who is not a host of the study) not found; `path` names which.'),
          409: errorResponse('The time is not open (`startTime`), the participant already holds a booking or cannot be SCHEDULED (an opted-out person, a REJECTED or COMPLETED participant, a study not ACTIVE: `participantId`), or the study is not an interview study or has no host (`studyId`).'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createBooking(context(request), request.params.studyId, request.body)),
  );

  app.get(
    '/studies/:studyId/bookings/:bookingId',
    {
      config: { right: 'participants:read' },
      schema: { operationId: 'getStudyBooking', summary: 'Get a booking', description: guide, tags, params: BookingParams, response: { 200: Type.Ref(Booking), 404: bookingNotFound } },
    },
    async (request) => service.getBooking(context(request), request.params.studyId, request.params.bookingId),
  );

  app.post(
    '/studies/:studyId/bookings/:bookingId/move',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'moveStudyBooking',
        summary: 'Move a booking to another time',
        description: `Frees the booking's place and takes one at the new time under the same rules, in one step: the old time opens again at once. The booking keeps its id (and its calendar event), its sequence rises, the person and the host receive the updated invitation, \`booking.moved\` is sent. ${guide}`,
        tags,
        params: BookingParams,
        body: MoveBookingBody,
        response: {
          200: Type.Ref(Booking),
          400: errorResponse('Invalid input; `path` names the field.'),
          404: bookingNotFound,
          409: errorResponse('The new time is not open, the booking is canceled, or the participant cannot be SCHEDULED; `path` names the field.'),
        },
      },
    },
    async (request) => service.moveBooking(context(request), request.params.studyId, request.params.bookingId, request.body),
  );

  app.post(
    '/studies/:studyId/bookings/:bookingId/cancel',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'cancelStudyBooking',
        summary: 'Cancel a booking',
        description: `Frees the place at once, records the reason, moves a SCHEDULED participant to CANCELED (with its event), sends \`booking.canceled\` and the calendar cancellation. ${guide}`,
        tags,
        params: BookingParams,
        body: CancelBookingBody,
        response: { 200: Type.Ref(Booking), 400: errorResponse('Invalid input; `path` names the field.'), 404: bookingNotFound, 409: errorResponse('The booking is canceled already.') },
      },
    },
    async (request) => service.cancelBooking(context(request), request.params.studyId, request.params.bookingId, request.body ?? {}),
  );
};
