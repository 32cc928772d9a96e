// Reads WARC files with webrecorder's warcio.js — a reader that is not ours — and prints one
// JSON line per record: where it is, what it says, and whether its payload digest holds.
// Usage: node scripts/warc_check.mjs FILE...   (warcio from .tools/node, see scripts/tools.sh)
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.env.WARCIO_DIR || path.join(here, "..", ".tools", "node", "node_modules", "warcio");
const { WARCParser } = await import(pathToFileURL(path.join(dir, "dist", "index.js")).href);

const b32 = (buf) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8) out += "=";
  return out;
};

let failed = false;
for (const file of process.argv.slice(2)) {
  try {
    const parser = new WARCParser(createReadStream(file));
    for await (const record of parser) {
      const payload = await record.readFully(false);
      const digest = record.warcHeader("WARC-Payload-Digest") || "";
      let digestOK = null;
      if (digest.startsWith("sha256:") && record.warcType === "response") {
        digestOK = "sha256:" + b32(createHash("sha256").update(payload).digest()) === digest;
      }
      console.log(JSON.stringify({
        file, offset: parser.offset, length: parser.recordLength,
        type: record.warcType, id: record.warcHeader("WARC-Record-ID"), uri: record.warcTargetURI || "",
        date: record.warcDate || "", status: record.httpHeaders ? Number(record.httpHeaders.statusCode) : 0,
        contentType: record.httpHeaders ? record.httpHeaders.headers.get("Content-Type") || "" : "",
        profile: record.warcHeader("WARC-Profile") || "", refersTo: record.warcHeader("WARC-Refers-To-Target-URI") || "",
        refersToID: record.warcHeader("WARC-Refers-To") || "",
        payloadDigest: digest, payloadBytes: payload.length, digestOK,
      }));
    }
  } catch (err) {
    failed = true;
    console.error(`${file}: ${err && err.stack ? err.stack : err}`);
  }
}
process.exit(failed ? 1 : 0);
