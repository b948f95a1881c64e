import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigReference } from '../../src/config/reference.js';

/* npm run docs:config: rewrites docs/configuration.md from the config schemas (src/config/reference.ts). */

const target = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));
writeFileSync(target, renderConfigReference());
process.stdout.write(`wrote ${target}\n`);
