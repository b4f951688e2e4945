import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { BrandingConfigsTable, DB } from '../../db/schema.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { accentRefusal } from './contrast.js';
import { type LogoContentType, logoContentTypes, logoExtension, logoMaxBytes, readImage } from './images.js';
import * as queries from './queries.js';
import type { BrandingConfigRow } from './queries.js';
import type { BrandingConfig, CreateBrandingConfigBody, UpdateBrandingConfigBody } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

/** Where the pages serve a logo: its hash and its type's extension in the name, so it can be cached for good. */
export const logoPath = (sha256: string, contentType: LogoContentType) => `/p/assets/logo-${sha256}.${logoExtension[contentType]}`;

function present(row: BrandingConfigRow): BrandingConfig {
  const hasLogo = row.logo_sha256 !== null && row.logo_content_type !== null;
  return {
    brandingConfigId: row.branding_config_id,
    displayName: row.display_name,
    accentColor: row.accent_color,
    logo: hasLogo
      ? {
          contentType: row.logo_content_type!,
          byteSize: Number(row.logo_bytes),
          width: row.logo_width!,
          height: row.logo_height!,
          sha256: row.logo_sha256!,
          path: logoPath(row.logo_sha256!, row.logo_content_type!),
        }
      : null,
    logoAlt: row.logo_alt,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdByUserId: row.created_by_user_id,
  };
}

/** The accent as stored (lower case), or a 400 naming accentColor that says what is allowed. */
function checkedAccent(accent: string | null | undefined): string | null | undefined {
  if (accent === undefined || accent === null) return accent;
  const hex = accent.toLowerCase();
  const refusal = accentRefusal(hex);
  if (refusal) throw badRequest(refusal, ['accentColor']);
  return hex;
}

type LogoColumns = Pick<BrandingConfigsTable, 'logo' | 'logo_content_type' | 'logo_sha256' | 'logo_width' | 'logo_height'>;
const noLogo: LogoColumns = { logo: null, logo_content_type: null, logo_sha256: null, logo_width: null, logo_height: null };

/** The logo's columns from what was sent: its type allowed, its base64 decoded, its size and its bytes checked against the type named. */
function checkedLogo(logo: CreateBrandingConfigBody['logo']): LogoColumns | undefined {
  if (logo === undefined) return undefined;
  if (logo === null) return noLogo;
  const named = logo.contentType.toLowerCase();
  if (!(logoContentTypes as readonly string[]).includes(named)) {
    const svg = named.includes('svg') ? 'SVG is not accepted, as it can carry script; ' : '';
    throw badRequest(`logo.contentType ${JSON.stringify(logo.contentType)} is not accepted: ${svg}send image/png, image/jpeg or image/webp`, ['logo', 'contentType']);
  }
  const text = logo.data.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw badRequest('logo.data is not base64 (RFC 4648: A–Z, a–z, 0–9, +, /, and = padding at the end)', ['logo', 'data']);
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0) throw badRequest('logo.data is empty: send the image\'s bytes', ['logo', 'data']);
  if (bytes.length > logoMaxBytes) {
    throw badRequest(`The logo is ${bytes.length.toLocaleString('en')} bytes; at most ${logoMaxBytes.toLocaleString('en')} (${logoMaxBytes / 1024} KiB) are accepted`, ['logo', 'data']);
  }
  const image = readImage(bytes);
  if (typeof image === 'string') throw badRequest(`logo.data: ${image}`, ['logo', 'data']);
  if (image.contentType !== named) throw badRequest(`logo.data is a ${image.contentType} image, not the ${named} named by logo.contentType`, ['logo', 'data']);
  return { logo: bytes, logo_content_type: image.contentType, logo_sha256: createHash('sha256').update(bytes).digest('hex'), logo_width: image.width, logo_height: image.height };
}

export async function createConfig(context: CallContext, body: CreateBrandingConfigBody): Promise<BrandingConfig> {
  const accent = checkedAccent(body.accentColor);
  const logo = checkedLogo(body.logo) ?? noLogo;
  const at = context.clock.now().toISOString();
  const brandingConfigId = newId(idPrefixes.brandingConfig);
  await queries.insertConfig(context.db, {
    workspace_id: context.workspaceId,
    branding_config_id: brandingConfigId,
    display_name: body.displayName,
    accent_color: accent ?? null,
    ...logo,
    logo_alt: body.logoAlt ?? null,
    created_by_user_id: context.userId,
    created_at: at,
    updated_at: at,
  });
  return getConfig(context, brandingConfigId);
}

export async function getConfig(context: CallContext, brandingConfigId: string): Promise<BrandingConfig> {
  const row = await queries.findConfig(context.db, context.workspaceId, brandingConfigId);
  if (!row) throw notFound('Branding config', ['brandingConfigId']);
  return present(row);
}

/** Changes the fields given; null removes an accent, a logo or its text. */
export async function updateConfig(context: CallContext, brandingConfigId: string, body: UpdateBrandingConfigBody): Promise<BrandingConfig> {
  const accent = checkedAccent(body.accentColor);
  const logo = checkedLogo(body.logo);
  const updated = await queries.updateConfig(context.db, context.workspaceId, brandingConfigId, {
    ...(body.displayName === undefined ? {} : { display_name: body.displayName }),
    ...(accent === undefined ? {} : { accent_color: accent }),
    ...(logo ?? {}),
    ...(body.logoAlt === undefined ? {} : { logo_alt: body.logoAlt }),
    updated_at: context.clock.now().toISOString(),
  });
  if (!updated) throw notFound('Branding config', ['brandingConfigId']);
  return getConfig(context, brandingConfigId);
}

export async function deleteConfig(context: CallContext, brandingConfigId: string): Promise<{ brandingConfigId: string }> {
  if (!(await queries.deleteConfig(context.db, context.workspaceId, brandingConfigId))) throw notFound('Branding config', ['brandingConfigId']);
  return { brandingConfigId };
}

export async function listConfigs(context: CallContext, afterId: string | undefined, size: number) {
  const { rows, total } = await queries.listConfigs(context.db, context.workspaceId, afterId, size);
  return { rows: rows.slice(0, size).map(present), hasNextPage: rows.length > size, total };
}

/** What a study's participant pages wear: the config's name, accent and logo. */
export interface PageBranding {
  displayName: string;
  accentColor: string | null;
  logo: { path: string; alt: string | null; width: number; height: number } | null;
}

/**
 * The branding a study's `brandingConfigId` names, for the participant pages; undefined when it
 * names no config of the workspace (none given, a free text from before, a config deleted since,
 * another workspace's id): the pages then fall back to the workspace's name and their own style.
 * An accent stored before a stricter rule that would now be refused is left out, not served.
 */
export async function findPageBranding(db: Kysely<DB>, workspaceId: string, brandingConfigId: string | null | undefined): Promise<PageBranding | undefined> {
  if (!brandingConfigId || brandingConfigId.length > 100) return undefined;
  const row = await queries.findConfig(db, workspaceId, brandingConfigId);
  if (!row) return undefined;
  const config = present(row);
  return {
    displayName: config.displayName,
    accentColor: config.accentColor !== null && accentRefusal(config.accentColor) === undefined ? config.accentColor : null,
    logo: config.logo ? { path: config.logo.path, alt: config.logoAlt, width: config.logo.width, height: config.logo.height } : null,
  };
}

/** A logo's bytes and type by its hash, for the pages' asset route; undefined when no workspace holds it. */
export async function findLogo(ownerDb: Kysely<DB>, sha256: string): Promise<{ bytes: Buffer; contentType: LogoContentType } | undefined> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  const row = await queries.findLogoByHash(ownerDb, sha256);
  if (!row?.logo || !row.logo_content_type) return undefined;
  return { bytes: Buffer.from(row.logo.buffer, row.logo.byteOffset, row.logo.byteLength), contentType: row.logo_content_type };
}
