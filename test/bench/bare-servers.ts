import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * The two reference servers of the benchmark, each answering every request with the same
 * fixed JSON body, of the size of a real list page: what node:http and Express cost alone.
 * Usage: node bare-servers.js <http|express> <bodyBytes>; prints {"port": n} when listening.
 */

const [kind, size] = process.argv.slice(2);
const body = Buffer.from(JSON.stringify({ data: 'x'.repeat(Math.max(0, Number(size) - 12)) }));

const server =
  kind === 'express'
    ? express()
        .disable('x-powered-by')
        .get('/{*path}', (_req, res) => {
          res.type('application/json').send(body);
        })
        .listen(0, '127.0.0.1')
    : createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
      }).listen(0, '127.0.0.1');

server.on('listening', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
