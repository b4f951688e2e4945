import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, MessageTemplatesTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type MessageTemplateRow = Selectable<MessageTemplatesTable>;

const templateColumns = ['template_id', 'name', 'subject', 'text_body', 'html_body', 'created_at', 'updated_at'] as const;

export async function insertTemplate(db: Executor, template: Insertable<MessageTemplatesTable>) {
  return db.insertInto('message_templates').values(template).returning(templateColumns).executeTakeFirstOrThrow();
}

export async function findTemplate(db: Executor, workspaceId: string, templateId: string) {
  return db
    .selectFrom('message_templates')
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .select(templateColumns)
    .executeTakeFirst();
}

export async function updateTemplate(db: Executor, workspaceId: string, templateId: string, changes: Updateable<MessageTemplatesTable>) {
  return db
    .updateTable('message_templates')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .returning(templateColumns)
    .executeTakeFirst();
}

/** Whether a template was deleted (false: none of that id in the workspace). */
export async function deleteTemplate(db: Executor, workspaceId: string, templateId: string): Promise<boolean> {
  const result = await db.deleteFrom('message_templates').where('workspace_id', '=', workspaceId).where('template_id', '=', templateId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A page of templates in the order they were made, after the keyset `afterTemplateId`; plus the exact total. */
export async function listTemplates(db: Executor, workspaceId: string, afterTemplateId: string | undefined, size: number) {
  const base = db.selectFrom('message_templates').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterTemplateId !== undefined, (query) => query.where('template_id', '>', afterTemplateId!))
      .select(templateColumns)
      .orderBy('template_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** The workspace's name, for `workspace.name`. */
export async function findWorkspaceName(db: Executor, workspaceId: string): Promise<string> {
  const row = await db.selectFrom('workspaces').where('workspace_id', '=', workspaceId).select('name').executeTakeFirst();
  return row?.name ?? '';
}
