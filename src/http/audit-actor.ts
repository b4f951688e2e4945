import type { FastifyRequest } from 'fastify';

/**
 * Who made a write that came with no API credential: the participant's pages and the public
 * routes say it here (the workspace the link or form belongs to, the person when known, the
 * resource), since only they know it. The audit trail's hook (src/families/audit/recorder.ts)
 * reads it when the request succeeds; a request with a principal needs none.
 */
export interface AuditAttribution {
  workspaceId: string;
  actor:
    | { kind: 'PARTICIPANT'; personId?: string | undefined }
    | { kind: 'SERVICE'; service: string }
    /** A user signing in or out of the console: the session routes know them before any principal does. */
    | { kind: 'USER'; userId: string; credentialId: string }
    /** Someone not signed in (a sign-in link asked for). */
    | { kind: 'VISITOR' };
  resourceType?: string;
  resourceId?: string;
  /** A state the write changed, when the route knows it (a participant's status). */
  before?: string | null;
  after?: string | null;
}

/** What a route or service tells the audit trail about its write, beyond what the hook finds itself. */
export interface AuditDetails {
  resourceType?: string;
  resourceId?: string;
  before?: string | null;
  after?: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by public routes (attributeWrite): the workspace and actor of their write. */
    auditAttribution: AuditAttribution | undefined;
    /** Set by a route that knows more of its write than the hook can find (noteWrite). */
    auditDetails: AuditDetails | undefined;
  }
  interface FastifyContextConfig {
    /**
     * The audit trail's view of the route: `false` for a route whose POST reads rather than writes
     * (a search, a preview); a resource type that the path does not name; `writesOnGet` for a GET
     * that writes (the end of a sign-in by SSO, which the provider sends the browser to).
     */
    audit?: false | { resourceType?: string; writesOnGet?: boolean };
  }
}

/** A public route's write: whose workspace, and who (the person on a link's page, a provider's report). */
export function attributeWrite(request: FastifyRequest, attribution: AuditAttribution): void {
  request.auditAttribution = attribution;
}

/** A route's own details of its write: the resource and the state it changed. */
export function noteWrite(request: FastifyRequest, details: AuditDetails): void {
  request.auditDetails = { ...request.auditDetails, ...details };
}

/** A write route that, this time, wrote nothing worth an entry (a sign-in by SSO that failed and sent the browser back). */
export function recordNothing(request: FastifyRequest): void {
  request.auditPending = undefined;
}
