/**
 * Text made safe for XML 1.0. Characters XML cannot carry at all (most control characters, lone
 * surrogates, U+FFFE and U+FFFF) are removed, since no escape can represent them; markup
 * characters are escaped, which also takes care of `]]>`.
 */

// Everything outside XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
const invalidCharacters = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function removeInvalidXmlCharacters(text: string): string {
  return text.replace(invalidCharacters, '');
}

/** Carriage returns are written as references, because parsers turn a literal CR LF into LF. */
export function escapeXmlText(text: string): string {
  return removeInvalidXmlCharacters(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r/g, '&#13;');
}

/** Line breaks and tabs are written as references too, because parsers turn literal ones in attributes into spaces. */
export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
}
