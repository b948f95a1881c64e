import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` after a change to schema.ts writes the next migration here.
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/snapshot/schema.ts',
  out: './src/db/snapshot/migrations',
});
