// The startup bench's floor: a bare Fastify process on the same store, started the same way as
// the service (plain `node`), answering /readyz with the service's readiness query and every
// other request with one small query. Plain JavaScript so nothing compiles it.
import Fastify from 'fastify';

const port = Number(process.env.PORT);
let query;
let close;
if (process.env.DATABASE_URL) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  query = (text) => pool.query(text).then((result) => result.rows);
  close = () => pool.end();
} else {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const startParams = PGlite.defaultStartParams.filter((parameter) => parameter !== '-F');
  const db = await PGlite.create({ dataDir: `${process.env.DATA_DIR}/pgdata`, startParams, extensions: { pg_trgm } });
  query = (text) => db.query(text).then((result) => result.rows);
  close = () => db.close();
}
const app = Fastify();
app.get('/readyz', async () => {
  await query('select workspace_id from workspaces limit 1');
  return { status: 'ready' };
});
app.all('/*', async () => ({ data: await query('select study_id from studies limit 25') }));
await app.listen({ host: '127.0.0.1', port });
const stop = async () => {
  await app.close();
  await close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
