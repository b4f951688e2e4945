import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { errorResponse } from '../../http/schemas.js';
import { ParticipantParams } from '../participants/requests.js';
import { IssueLinkBody, IssuedLink } from './schemas.js';
import * as service from './service.js';

/** The origin links point at: PUBLIC_URL, else the one this request came to (a single instance, tried locally). */
function publicUrlOf(deps: ServiceDeps, request: FastifyRequest): string {
  return deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

export const participantLinksRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.post(
    '/studies/:studyId/participants/:participantId/links',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'createParticipantLink',
        summary: "Make a participant's link to their pages",
        description:
          'Makes a new link that opens one of the participant\'s pages (`purpose`), for the team to hand over by their own means; messages whose template uses `links.screener`, `links.consent` or `links.scheduling` make their own. ' +
          'Each call makes another link; earlier ones stay valid until they expire. The `url` is in this answer only: the service keeps the SHA-256 of its token. ' +
          "A link is bound to this participant and this purpose: it shows that person's page and nothing else. It expires as `expiresAt` says, and a screener or consent page also says so once the study is closed or paused. " +
          'The origin of `url` is PUBLIC_URL, or the one this request came to when PUBLIC_URL is not set.',
        tags: ['Participants'],
        params: ParticipantParams,
        body: IssueLinkBody,
        response: {
          201: Type.Ref(IssuedLink),
          400: errorResponse('Invalid input; `path` names the offending field (`purpose` lists the allowed values).'),
          404: errorResponse("Study not found (path [\"studyId\"]), or Participant not found (path [\"participantId\"]), also another workspace's or one whose person was deleted."),
        },
      },
    },
    async (request, reply) => {
      const { purpose } = request.body;
      const link = await service.issueLinkForParticipant(requestContext(deps, request), request.params.studyId, request.params.participantId, purpose, publicUrlOf(deps, request));
      return reply.code(201).send({ ...link, purpose });
    },
  );
};
