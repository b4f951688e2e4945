import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { ServiceDeps } from '../context.js';
import type { DB } from '../db/schema.js';
import { accentRefusal } from '../families/branding/contrast.js';
import { findLogo, findPageBranding } from '../families/branding/service.js';
import type { PageBrand } from './layout.js';
import { setPageHeaders } from './security.js';

/**
 * A study's branding on its participant pages (src/families/branding/ keeps the configs): the
 * display name in the header and title, the logo served from this server at a path named by its
 * hash, and the accent through a tiny stylesheet of its own (the Content-Security-Policy allows no
 * inline style). A study whose `brandingConfigId` names no config of its workspace wears the
 * workspace's name and the pages' own style.
 */

/** The accent's stylesheet: only the custom property the pages' stylesheet draws buttons, links and focus with. */
const accentStylesheet = (hex: string) => `:root { --accent: ${hex}; }\n`;
const stylesheetHash = (hex: string) => createHash('sha256').update(accentStylesheet(hex)).digest('hex').slice(0, 16);
/** Its path: the colour, and the hash of the text served, so a change of either is a new path, cached for good. */
export const accentStylesheetPath = (hex: string) => `/p/assets/brand-${hex.slice(1)}-${stylesheetHash(hex)}.css`;

/** The branding of a study's pages, through the branding family's service; undefined: the workspace's defaults. */
export async function brandingForPage(db: Kysely<DB>, workspaceId: string, brandingConfigId: string | null | undefined): Promise<PageBrand | undefined> {
  const branding = await findPageBranding(db, workspaceId, brandingConfigId);
  if (!branding) return undefined;
  return {
    displayName: branding.displayName,
    ...(branding.accentColor ? { stylesheetPath: accentStylesheetPath(branding.accentColor) } : {}),
    ...(branding.logo ? { logo: branding.logo } : {}),
  };
}

/** The brand each reply's page wears, set when its link is opened and read when the page is sent. */
const brands = new WeakMap<FastifyReply, PageBrand>();
export const rememberBrand = (reply: FastifyReply, brand: PageBrand | undefined) => (brand ? brands.set(reply, brand) : brands.delete(reply));
export const brandOf = (reply: FastifyReply) => brands.get(reply);

/**
 * The brands' assets: each accent's stylesheet (made from the colour in its path: an accent the
 * service would refuse is not served) and each logo by its hash, with its own content type. Both
 * are immutable (their content is in their name), sent with the pages' headers (nosniff among
 * them) and rate-limited per address like the pages.
 */
export const brandingAssets: FastifyPluginAsync<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const perAddress = deps.limiter.withBudget({ name: 'participant-assets', max: deps.config.participantRateLimitMax });
  const notFound = (reply: FastifyReply) => {
    setPageHeaders(reply, { cacheable: false });
    return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
  };

  app.get<{ Params: { name: string } }>('/p/assets/brand-:name', async (request, reply) => {
    const match = /^([0-9a-f]{6})-([0-9a-f]{16})\.css$/.exec(request.params.name);
    const hex = match ? `#${match[1]}` : undefined;
    if (!hex || accentRefusal(hex) !== undefined || stylesheetHash(hex) !== match![2]) return notFound(reply);
    setPageHeaders(reply, { cacheable: true });
    return reply.type('text/css; charset=utf-8').send(accentStylesheet(hex));
  });

  app.get<{ Params: { name: string } }>('/p/assets/logo-:name', async (request, reply) => {
    const decision = await perAddress.consume(`address:${request.ip}`);
    if (!decision.allowed) {
      reply.header('Retry-After', decision.retryAfterSeconds);
      setPageHeaders(reply, { cacheable: false });
      return reply.code(429).type('text/plain; charset=utf-8').send('Too Many Requests');
    }
    const match = /^([0-9a-f]{64})\.(png|jpg|webp)$/.exec(request.params.name);
    const logo = match ? await findLogo(deps.db, match[1]!) : undefined;
    if (!logo || !logo.contentType.endsWith(match![2] === 'jpg' ? 'jpeg' : match![2]!)) return notFound(reply);
    setPageHeaders(reply, { cacheable: true });
    return reply.type(logo.contentType).send(logo.bytes);
  });
};
