import { describe, expect, it } from 'vitest';
import { checkPublicUrl, MAX_URL_LENGTH } from '../../../src/lib/safe-url.js';

// Every way a browser would still run a script (or leave http) from a value a naive check passes.
const HOSTILE = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  '\u0001\u0002javascript:alert(1)',
  '\u0000javascript:alert(1)',
  '\u001fjavascript:alert(1)  ',
  'java\tscript:alert(1)',
  'java\nscript:alert(1)',
  'java\rscript:alert(1)',
  'j\ta\nv\ra\tscript:alert(1)',
  'javascript&#58;alert(1)',
  'javascript&#x3A;alert(1)',
  'javascript&colon;alert(1)',
  '&#106;avascript:alert(1)',
  'javascript%3Aalert(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'DATA:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'VBScript:msgbox(1)',
  'file:///etc/passwd',
  'ftp://files.example.com/a',
  'blob:https://example.com/uuid',
  'about:blank',
  'mailto:a@example.com',
  '//evil.example.com/a.jpg',
  '\\\\evil.example.com/a.jpg',
  '/relative/path.jpg',
  'relative.jpg',
  '',
  '   ',
  'https://',
  'http://',
  'https://user:pass@example.com/',
  'https://news.example.com@evil.example.com/',
  `https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`,
];

describe('public URL check', () => {
  it.each(HOSTILE)('refuses %j', (value) => {
    const verdict = checkPublicUrl(value);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(/^(not an absolute http\(s\) URL|longer than)/);
  });

  it.each([
    ['https://img.example.com/a.jpg', 'https://img.example.com/a.jpg'],
    ['http://img.example.com/a.jpg?w=640&h=480#top', 'http://img.example.com/a.jpg?w=640&h=480#top'],
    // What a browser resolves is what partners get: one canonical, unambiguous form.
    ['HTTPS://IMG.Example.COM/A.jpg', 'https://img.example.com/A.jpg'],
    ['  https://img.example.com/a.jpg\u0001', 'https://img.example.com/a.jpg'],
    ['ht\ttps://img.example.com/a.jpg', 'https://img.example.com/a.jpg'],
    ['https:\\\\img.example.com\\a.jpg', 'https://img.example.com/a.jpg'],
    ['https://img.example.com', 'https://img.example.com/'],
    ['https://例子.测试/图片.jpg', 'https://xn--fsqu00a.xn--0zwm56d/%E5%9B%BE%E7%89%87.jpg'],
    // Quotes and angle brackets cannot break out of an attribute once percent-encoded.
    ['https://img.example.com/"><script>alert(1)</script>', 'https://img.example.com/%22%3E%3Cscript%3Ealert(1)%3C/script%3E'],
  ])('accepts %j as %j', (value, href) => {
    expect(checkPublicUrl(value)).toEqual({ ok: true, href });
  });

  it('only ever returns http or https URLs with a host and no credentials', () => {
    for (const value of [...HOSTILE, 'https://a.b/', 'http://c.d:8080/x']) {
      const verdict = checkPublicUrl(value);
      if (!verdict.ok) continue;
      expect(verdict.href).toMatch(/^https?:\/\/[^/@\s]+\//);
    }
  });
});
