// Draws the extension's icon, images/icon.png (256×256 RGBA): a white "@" on an indigo rounded
// square. Pure Node (zlib for the PNG's deflate); run `node scripts/icon.mjs` to redraw it.
// Each shape is a signed distance field, so its edges are antialiased by coverage.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const SIZE = 256;
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'images', 'icon.png');

/** Distance from (x, y) to a rounded square inset by `inset` with corner radius `r` (negative inside). */
function roundedSquare(x, y, inset, r) {
  const half = SIZE / 2 - inset;
  const qx = Math.abs(x - SIZE / 2) - (half - r);
  const qy = Math.abs(y - SIZE / 2) - (half - r);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

/** Distance from (x, y) to the segment a–b. */
function segment(x, y, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - ax - t * dx, y - ay - t * dy);
}

/** Distance from (x, y) to the arc of radius `r` around (cx, cy) going clockwise (y down) from angle `from` to `to`, in degrees. */
function arc(x, y, cx, cy, r, from, to) {
  const span = (((to - from) % 360) + 360) % 360 || 360;
  const angle = (Math.atan2(y - cy, x - cx) * 180) / Math.PI;
  const along = (((angle - from) % 360) + 360) % 360;
  if (along <= span) return Math.abs(Math.hypot(x - cx, y - cy) - r);
  const end = (a) => [cx + r * Math.cos((a * Math.PI) / 180), cy + r * Math.sin((a * Math.PI) / 180)];
  const [fx, fy] = end(from);
  const [tx, ty] = end(to);
  return Math.min(Math.hypot(x - fx, y - fy), Math.hypot(x - tx, y - ty));
}

// The "@": the bowl of the a, its stem, the hook under the stem and the open outer ring.
const C = SIZE / 2;
const STROKE = 9; // half the stroke width
const BOWL = 30;
const STEM_X = C + BOWL;
const HOOK = 20;
const HOOK_END = [STEM_X + 2 * HOOK, C + 22];
const RING = Math.hypot(HOOK_END[0] - C, HOOK_END[1] - C);
const RING_START = (Math.atan2(HOOK_END[1] - C, HOOK_END[0] - C) * 180) / Math.PI;

function at(x, y) {
  return (
    Math.min(
      Math.abs(Math.hypot(x - C, y - C) - BOWL),
      segment(x, y, STEM_X, C - BOWL - 4, STEM_X, C + 22),
      arc(x, y, STEM_X + HOOK, C + 22, HOOK, 0, 180),
      arc(x, y, C, C, RING, 52, RING_START),
    ) - STROKE
  );
}

const coverage = (distance) => Math.max(0, Math.min(1, 0.5 - distance));
const mix = (a, b, t) => a + (b - a) * t;
const TOP = [99, 102, 241]; // indigo 500
const BOTTOM = [49, 46, 129]; // indigo 900

const rows = Buffer.alloc((SIZE * 4 + 1) * SIZE);
for (let y = 0; y < SIZE; y++) {
  const row = y * (SIZE * 4 + 1);
  rows[row] = 0; // filter: none
  for (let x = 0; x < SIZE; x++) {
    const px = x + 0.5;
    const py = y + 0.5;
    const background = coverage(roundedSquare(px, py, 8, 52));
    const glyph = coverage(at(px, py)) * background;
    const t = y / (SIZE - 1);
    const rgb = TOP.map((top, i) => mix(mix(top, BOTTOM[i], t), 255, glyph));
    const o = row + 1 + x * 4;
    rows[o] = Math.round(rgb[0]);
    rows[o + 1] = Math.round(rgb[1]);
    rows[o + 2] = Math.round(rgb[2]);
    rows[o + 3] = Math.round(255 * background);
  }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bits per channel
header[9] = 6; // RGBA
writeFileSync(
  out,
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]),
);
console.log(`wrote ${path.relative(process.cwd(), out)} (${SIZE}×${SIZE})`);
