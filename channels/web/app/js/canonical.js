// The bytes a signed chat message covers (spec 3.1), exactly as the server
// rebuilds them to verify (runtime/keys.MessageBytes): the canonical JSON of
// {nonce, text, timestamp}, keys sorted, no whitespace. JSON.stringify of an
// object literal with the keys already in sorted order produces them: the
// server escapes strings the way JSON.stringify does (runtime/canonical).

const utf8 = new TextEncoder();

/**
 * wellFormed replaces lone surrogates with U+FFFD, as the WebSocket's UTF-8
 * encoding does on the way out: the text signed must be the text the server
 * receives.
 */
export function wellFormed(text) {
  return typeof text.toWellFormed === 'function' ? text.toWellFormed() : text;
}

/** messageBytes returns the UTF-8 canonical bytes of a chat message. */
export function messageBytes(text, timestamp, nonce) {
  return utf8.encode(JSON.stringify({ nonce, text: wellFormed(text), timestamp }));
}

/** base64 encodes bytes as standard, padded base64. */
export function base64(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return btoa(s);
}
