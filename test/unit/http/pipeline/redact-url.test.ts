import { describe, expect, it } from 'vitest';
import { redactKeys } from '../../../../src/http/pipeline/redact-url.js';

const SECRET = 'sk_live_51HvQ2xYz';
const OUR_KEY = 'lsk_0123456789abcdefghijABCDEFGHIJ01';

describe('query-string redaction for the request log', () => {
  it.each([
    'api_key', 'apikey', 'key', 'token', 'access_token', 'auth', 'password', 'secret', 'signature',
    'API_KEY', 'ApiKey', 'Api-Key', 'x-api-key', 'X_API_KEY', 'Token', 'ACCESS_TOKEN', 'Authorization',
    'refresh_token', 'id_token', 'client_secret', 'passwd', 'pwd', 'sig', 'X-Amz-Signature', 'session_id',
    'api_key[]', 'token[0]', 'access.token', 'jwt', 'credentials', 'hmac', 'code',
  ])('replaces the value of %j whatever the value', (name) => {
    for (const value of [SECRET, '1', 'hello world', '']) {
      const out = redactKeys(`/api/v1/articles?locale=en&${name}=${encodeURIComponent(value)}&page=2`);
      expect(out).toBe(`/api/v1/articles?locale=en&${name}=[redacted]&page=2`);
    }
  });

  it.each([
    ['percent-encoded name', 'api%5Fkey'],
    ['fully percent-encoded name', '%61%70%69%5f%6b%65%79'],
    ['percent-encoded upper case', '%54%4F%4B%45%4E'],
    ['plus as a space', 'api+key'],
    ['malformed escape beside it', 'api%ZZkey'],
    ['encoded dash', 'x%2Dapi%2Dkey'],
  ])('recognises a %s (%s)', (_what, name) => {
    expect(redactKeys(`/api/v1/search?q=laser&${name}=${SECRET}`)).toBe(`/api/v1/search?q=laser&${name}=[redacted]`);
  });

  it('redacts every occurrence of a repeated parameter, and with ; as separator', () => {
    const out = redactKeys(`/api/v1/articles?token=${SECRET}&token=${SECRET}2;key=${SECRET}3`);
    expect(out).toBe('/api/v1/articles?token=[redacted]&token=[redacted];key=[redacted]');
    expect(out).not.toContain(SECRET);
  });

  it('masks one of our keys anywhere: path, value, name, encoded', () => {
    for (const url of [
      `/api/v1/articles/${OUR_KEY}`,
      `/api/v1/articles?x=${OUR_KEY}`,
      `/api/v1/articles?${OUR_KEY}`,
      `/api/v1/articles?${OUR_KEY}=1`,
      `/api/v1/articles?x=lsk%5F0123456789abcdefghij`,
      `/api/v1/articles?x=%6c%73%6b%5f0123456789abcdefghij`,
      `/api/v1/%6c%73%6b%5f0123456789abcdefghij`,
    ]) {
      const out = redactKeys(url);
      expect(out).not.toMatch(/0123456789abcdefghij/);
      expect(out).toContain('[redacted]');
    }
  });

  it('leaves ordinary parameters, and URLs without a query, exactly as they were', () => {
    for (const url of [
      '/api/v1/articles',
      '/api/v1/articles?locale=zh&page=2&limit=50&section=fiber-lasers',
      '/api/v1/search?q=%E6%BF%80%E5%85%89&locale=zh',
      '/api/v1/changes?since=c_abc&limit=10',
      '/health',
      '/api/v1/articles?',
      '/api/v1/articles?&&=',
      '/api/v1/articles?q=%ZZ',
    ]) {
      expect(redactKeys(url)).toBe(url);
    }
  });
});
