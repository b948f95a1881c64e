import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router, type Response } from 'express';
import { projectRoot } from '../../lib/paths.js';
import { notModified } from '../cache/conditional.js';
import { ROUTES } from '../endpoints/routes-table.js';
import { codingFor, encodedBody, encodedEtag, variesWithEncoding, type Coding } from '../cache/encoding.js';

/*
 * GET /docs: the API reference for humans, Swagger UI rendering /api/v1/openapi.json, with a
 * short "getting started" above it. Every file comes from this server (swagger-ui-dist from
 * node_modules, our page from src/http/routes/docs-page/): no CDN, which partners' or our networks
 * may block. No key needed, like the document itself.
 */

// Swagger UI needs its own script and stylesheet from this origin (it sets styles through
// the DOM, which style-src does not govern); data: images are its icons. No inline script or
// style (the initializer is docs.js), no other origin. Only the page and its assets get this
// policy; the API keeps helmet's.
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

const swaggerDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const pageDir = () => join(projectRoot(), 'src', 'http', 'routes', 'docs-page');

/** The files the page may load, by the name it uses: nothing else of either folder is served. */
const FILES: Record<string, { dir: () => string; type: string }> = {
  'swagger-ui-bundle.js': { dir: swaggerDir, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { dir: swaggerDir, type: 'text/css; charset=utf-8' },
  'favicon-32x32.png': { dir: swaggerDir, type: 'image/png' },
  'docs.js': { dir: pageDir, type: 'text/javascript; charset=utf-8' },
  'docs.css': { dir: pageDir, type: 'text/css; charset=utf-8' },
  'index.html': { dir: pageDir, type: 'text/html; charset=utf-8' },
};

interface StaticFile {
  body: Buffer;
  etag: string;
  type: string;
  /** Text is compressed when asked (src/http/cache/encoding.ts), once per coding; images are not. */
  compressible: boolean;
  encoded?: Partial<Record<Coding, Buffer>>;
}

export function docsRoutes(clock: () => number): Router {
  const router = Router();
  const startedAt = clock();
  const loaded = new Map<string, StaticFile>();
  // Read on first use (the bundle is 1.7 MB) and kept: the files ship with the release.
  const file = (name: string): StaticFile => {
    let found = loaded.get(name);
    if (!found) {
      const spec = FILES[name]!;
      const body = readFileSync(join(spec.dir(), name));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
      found = { body, etag, type: spec.type, compressible: spec.type.startsWith('text/') };
      loaded.set(name, found);
    }
    return found;
  };

  const send = (req: { headers: Record<string, string | string[] | undefined> }, res: Response, name: string) => {
    const f = file(name);
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    // Revalidated after an hour: a new release changes the ETag. The same for everyone: shared
    // caches may keep it.
    res.setHeader('Cache-Control', 'public, max-age=3600');
    const coding = f.compressible ? codingFor(req.headers['accept-encoding'], f.body.length) : undefined;
    const etag = encodedEtag(f.etag, coding);
    if (f.compressible && variesWithEncoding(f.body.length)) res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', new Date(Math.floor(startedAt / 1000) * 1000).toUTCString());
    if (notModified(req.headers, etag, startedAt)) {
      res.status(304).end();
      return;
    }
    const body = encodedBody(f, coding);
    res.setHeader('Content-Type', f.type);
    if (coding) res.setHeader('Content-Encoding', coding);
    res.setHeader('Content-Length', body.length);
    res.end(body);
  };

  router.get(ROUTES.docs.path, (req, res) => {
    // The page's URLs are relative to `/docs` (so that they keep a path prefix): from `/docs/`
    // they would miss. Sent back to `/docs`, relatively, for the same reason.
    if (req.path.endsWith('/')) {
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(301, '../docs');
      return;
    }
    send(req, res, 'index.html');
  });
  router.get(ROUTES.docsAsset.path, (req, res, next) => {
    const name = req.params.name;
    if (name === 'index.html' || !Object.hasOwn(FILES, name)) return next();
    send(req, res, name);
  });
  return router;
}
