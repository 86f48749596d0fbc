// The request target, parsed once and strictly, so authentication and routing judge the same path:
// the router decides whether a key is needed from the route this parse matches (routes marked
// public), never from the raw URL. A key check on the raw URL while the router matched a normalised
// one let `/./v1/…`, `/%2e/v1/…`, `/x/../v1/…` and absolute-form targets through without a key:
// such spellings are refused outright.
import { AuthcapError } from '../domain/errors.js';

export interface RequestTarget {
  /** Decoded path segments, e.g. ['v1', 'authorizations', 'auth_…']. */
  segments: string[];
  /** The canonical path: '/' + segments joined. */
  path: string;
  query: URLSearchParams;
}

export function parseRequestTarget(rawUrl: string | undefined): RequestTarget {
  const raw = rawUrl ?? '';
  if (!raw.startsWith('/') || raw.startsWith('//')) {
    throw new AuthcapError('validation_error', 'the request target must be a path (origin-form), e.g. /v1/authorizations');
  }
  if (raw.length > 4096) throw new AuthcapError('validation_error', 'the request target is too long');
  const queryAt = raw.indexOf('?');
  const rawPath = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : raw.slice(queryAt + 1);
  if (/[\\\s]|%(?![0-9a-fA-F]{2})/.test(rawPath) || /%(2e|2f|5c|00)/i.test(rawPath)) {
    throw new AuthcapError(
      'validation_error',
      'the path has characters or escapes authcap does not accept (dots, slashes, backslashes or NUL percent-encoded)',
    );
  }
  const parts = rawPath.slice(1).split('/');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  const segments = parts.map((part) => {
    if (part === '.' || part === '..' || (part === '' && parts.length > 1)) {
      throw new AuthcapError('validation_error', 'the path has empty, "." or ".." segments');
    }
    try {
      return decodeURIComponent(part);
    } catch {
      throw new AuthcapError('validation_error', 'the path has a malformed percent-escape');
    }
  });
  if (/%(?![0-9a-fA-F]{2})/.test(rawQuery)) throw new AuthcapError('validation_error', 'the query has a malformed percent-escape');
  let query: URLSearchParams;
  try {
    // URLSearchParams never throws, but lone surrogates come out as U+FFFD: checked by the schemas.
    query = new URLSearchParams(rawQuery);
    for (const [key, value] of query) decodeURIComponent(encodeURIComponent(key) + encodeURIComponent(value));
  } catch {
    throw new AuthcapError('validation_error', 'the query is not valid UTF-8');
  }
  return { segments, path: `/${segments.join('/')}`, query };
}
