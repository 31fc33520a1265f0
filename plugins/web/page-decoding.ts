/**
 * What kind of document a response holds and how its bytes become text: the charset from the
 * Content-Type header, then a byte-order mark, then (for HTML) a <meta> declaration, then UTF-8.
 */

export type PageKind = 'html' | 'json' | 'text' | 'pdf' | 'binary';

export function pageKind(contentType: string | null, bytes: Buffer): PageKind {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return 'html';
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType === 'application/pdf') return 'pdf';
  if (mediaType.startsWith('text/') || mediaType === 'application/xml' || mediaType.endsWith('+xml')) return 'text';
  if (mediaType === 'application/javascript' || mediaType === 'application/x-ndjson') return 'text';
  if (mediaType && mediaType !== 'application/octet-stream') return 'binary';
  return sniffKind(bytes);
}

/** Servers that send no type, or a generic one, still send recognisable bytes. */
function sniffKind(bytes: Buffer): PageKind {
  const start = bytes.subarray(0, 1024).toString('latin1');
  if (start.startsWith('%PDF-')) return 'pdf';
  if (start.includes('\0')) return 'binary';
  if (/^\s*(<!doctype html|<html|<head|<body)/i.test(start)) return 'html';
  if (/^\s*[[{]/.test(start)) return 'json';
  return 'text';
}

export function decodePage(bytes: Buffer, contentType: string | null, kind: PageKind): string {
  const label = headerCharset(contentType) ?? bomCharset(bytes) ?? (kind === 'html' ? metaCharset(bytes) : undefined) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes);
}

function headerCharset(contentType: string | null): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1];
}

function bomCharset(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The HTML standard looks for the declaration in the first 1024 bytes; pages in the wild need a little more. */
function metaCharset(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const direct = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head);
  return direct?.[1];
}
