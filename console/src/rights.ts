import { operationRoles } from '@recruit-ops/sdk/browser';
import type { User } from './session.js';
import { useSession } from './session.js';

/**
 * What the signed-in role may do, from the OpenAPI document's `x-roles` (the server's one rights
 * table, generated into the SDK as operationRoles): an operation is `'method /path'` as the
 * document names it, `'post /studies'`. The console hides or disables a control whose operation
 * the role may not call; the API refuses it anyway (403), so this is for the person, not the wall.
 */
export type Operation = keyof typeof operationRoles;
export type Role = User['role'];

export function roleMay(role: Role, operation: Operation): boolean {
  return (operationRoles[operation] as readonly string[]).includes(role);
}

/** Whether the signed-in user's role may call `operation`. */
export function useMay(operation: Operation): boolean {
  return roleMay(useSession().session.user.role, operation);
}
