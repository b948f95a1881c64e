import { defineConfig } from 'drizzle-kit';

// `npx drizzle-kit generate --config src/db/keys/drizzle.config.ts` after a change to
// keys-schema.ts writes the keys database's next migration here (never into the snapshot's).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/keys/keys-schema.ts',
  out: './src/db/keys/migrations',
});
