import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { type Database, DataDirLockedError, openDatabase } from './db/database.js';
import type { UserRole, UsersTable } from './db/schema.js';
import { allRoles } from './http/rights.js';
import { AdminError } from './families/workspaces/errors.js';

const usage = `Usage: npm run --silent cli -- COMMAND [options] [--json]

  migrate                                   apply pending migrations
  workspace create --name N --email E [--full-name F]
  user create --workspace W --email E --role ROLE [--custom-role ID] [--full-name F] [--seat SEAT] [--team NAME]...
                                            (--custom-role: required with CUSTOM; see POST /v1/custom-roles)
  user deactivate --user U                  the user's tokens stop working (401)
  token create --user U [--no-pii] [--no-screeners]
  token list --user U | --workspace W      the tokens (ids, rights, created, revoked), never the tokens
  token revoke --token-id T | --token rk_…  that one token answers 401 from then on
  seed --demo                               a workspace full of demo data

Each command prints one JSON object on stdout. Storage: DATABASE_URL, or DATA_DIR (embedded).`;

class UsageError extends Error {}

const seats = ['SERVICE', 'RESEARCHER_FREE', 'RESEARCHER_PAID', 'LITE'] as const;

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

async function run(argv: string[], database: () => Promise<Database>): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      'full-name': { type: 'string' },
      workspace: { type: 'string' },
      role: { type: 'string' },
      'custom-role': { type: 'string' },
      seat: { type: 'string' },
      team: { type: 'string', multiple: true },
      user: { type: 'string' },
      'token-id': { type: 'string' },
      token: { type: 'string' },
      'no-pii': { type: 'boolean' },
      'no-screeners': { type: 'boolean' },
      demo: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || command === '' || command === 'help') throw new UsageError(usage);

  // Each command loads only the modules it uses: `migrate` needs no family, `seed` all of them.
  const migrateToLatest = async (db: Database['db']) => (await import('./db/migrate.js')).migrateToLatest(db);
  const workspaces = () => import('./families/workspaces/service.js');
  switch (command) {
    case 'migrate': {
      const { db } = await database();
      return migrateToLatest(db);
    }
    case 'workspace create': {
      const { db } = await database();
      await migrateToLatest(db);
      const { createWorkspace } = await workspaces();
      return createWorkspace(db, { name: required(values, 'name'), email: required(values, 'email'), fullName: values['full-name'] });
    }
    case 'user create': {
      const role = required(values, 'role') as UserRole;
      if (!allRoles.includes(role)) throw new UsageError(`--role must be one of ${allRoles.join(', ')}`);
      const seat = values.seat as UsersTable['seat'] | undefined;
      if (seat !== undefined && !seats.includes(seat as (typeof seats)[number])) throw new UsageError(`--seat must be one of ${seats.join(', ')}`);
      const { db } = await database();
      const { createUser } = await workspaces();
      return createUser(db, {
        workspaceId: required(values, 'workspace'),
        email: required(values, 'email'),
        role,
        ...(values['custom-role'] !== undefined ? { customRoleId: values['custom-role'] } : {}),
        fullName: values['full-name'],
        seat: seat ?? null,
        teams: values.team,
      });
    }
    case 'user deactivate': {
      const userId = required(values, 'user');
      const { db } = await database();
      const { findUserWorkspace, setUserStatus } = await workspaces();
      const workspaceId = await findUserWorkspace(db, userId);
      if (!workspaceId) throw new AdminError(`User ${userId} not found`);
      await setUserStatus(db, workspaceId, userId, 'DEACTIVATED');
      return { userId, status: 'DEACTIVATED' };
    }
    case 'token create': {
      const userId = required(values, 'user');
      const { db } = await database();
      const { createToken, findUserWorkspace } = await workspaces();
      const workspaceId = await findUserWorkspace(db, userId);
      if (!workspaceId) throw new AdminError(`User ${userId} not found`);
      const { token, tokenId } = await createToken(db, workspaceId, userId, { canReadPersonalData: !values['no-pii'], canReadScreeners: !values['no-screeners'] });
      return { token, tokenId };
    }
    case 'token list': {
      const user = values.user;
      const workspace = values.workspace;
      if ((user === undefined) === (workspace === undefined)) throw new UsageError('token list needs --user U or --workspace W (one of them)');
      const { db } = await database();
      const { findUserWorkspace, listTokens } = await workspaces();
      if (user !== undefined) {
        if (!(await findUserWorkspace(db, user))) throw new AdminError(`User ${user} not found`);
        return { tokens: await listTokens(db, { userId: user }) };
      }
      const known = await db.selectFrom('workspaces').where('workspace_id', '=', workspace!).select('workspace_id').executeTakeFirst();
      if (!known) throw new AdminError(`Workspace ${workspace} not found`);
      return { tokens: await listTokens(db, { workspaceId: workspace! }) };
    }
    case 'token revoke': {
      const tokenId = values['token-id'];
      const token = values.token;
      if ((tokenId === undefined) === (token === undefined)) throw new UsageError('token revoke needs --token-id T or --token rk_… (one of them)');
      const { db } = await database();
      const { revokeToken } = await workspaces();
      return revokeToken(db, tokenId !== undefined ? { tokenId } : { token: token! });
    }
    case 'seed': {
      if (!values.demo) throw new UsageError('seed needs --demo');
      const { db } = await database();
      await migrateToLatest(db);
      const [{ seedDemo }, { createClock }] = await Promise.all([import('./seed/demo.js'), import('./clock.js')]);
      return seedDemo(db, createClock());
    }
    default:
      throw new UsageError(`Unknown command "${command}"\n\n${usage}`);
  }
}

async function main() {
  let opened: Database | undefined;
  try {
    const config = loadConfig();
    const output = await run(process.argv.slice(2), async () => {
      opened ??= await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
      return opened;
    });
    process.stdout.write(`${JSON.stringify(output)}\n`);
    process.exitCode = 0;
  } catch (error) {
    const known = error instanceof UsageError || error instanceof AdminError || error instanceof ConfigError || error instanceof DataDirLockedError;
    process.stderr.write(`${known ? (error as Error).message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  } finally {
    await opened?.close();
  }
}

await main();
