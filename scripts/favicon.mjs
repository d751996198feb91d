// Writes console/favicon.ico from the shape of console/favicon.svg (a white "h" on the
// console's accent colour): a 32×32 PNG inside an ICO, drawn here so that no image tool is needed. Run it again
// after changing the shape: `node scripts/favicon.mjs`.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';

const SIZE = 32;
const BLUE = [11, 92, 173];
const STROKE = 1.75;

const segment = (px, py, [ax, ay], [bx, by]) => {
  const t = Math.max(
    0,
    Math.min(1, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)),
  );
  return Math.hypot(px - (ax + t * (bx - ax)), py - (ay + t * (by - ay)));
};
// The h: its stem, its shoulder (the upper half of a circle round 16,17 of radius 5) and its leg.
const onStroke = (x, y) =>
  Math.min(
    segment(x, y, [11, 7], [11, 25]),
    y <= 17 ? Math.abs(Math.hypot(x - 16, y - 17) - 5) : Number.POSITIVE_INFINITY,
    segment(x, y, [21, 17], [21, 25]),
  ) <= STROKE;
const inTile = (x, y) => {
  const r = 7;
  const cx = Math.max(r, Math.min(SIZE - r, x));
  const cy = Math.max(r, Math.min(SIZE - r, y));
  return Math.hypot(x - cx, y - cy) <= r;
};

/** RGBA rows, each pixel 4×4 samples. */
function pixels() {
  const rows = [];
  for (let y = 0; y < SIZE; y++) {
    const row = [0];
    for (let x = 0; x < SIZE; x++) {
      let tile = 0;
      let white = 0;
      for (let sy = 0; sy < 4; sy++)
        for (let sx = 0; sx < 4; sx++) {
          const px = x + (sx + 0.5) / 4;
          const py = y + (sy + 0.5) / 4;
          if (!inTile(px, py)) continue;
          tile++;
          if (onStroke(px, py)) white++;
        }
      const w = white / Math.max(1, tile);
      row.push(...BLUE.map((c) => Math.round(c + (255 - c) * w)), Math.round((tile / 16) * 255));
    }
    rows.push(...row);
  }
  return Buffer.from(rows);
}

const chunk = (type, data) => {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
};

const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr.set([8, 6, 0, 0, 0], 8);
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', ihdr),
  chunk('IDAT', deflateSync(pixels())),
  chunk('IEND', Buffer.alloc(0)),
]);
// ICONDIR (reserved, type 1 = icon, one image), then its entry, then the PNG.
const dir = Buffer.alloc(22);
dir.writeUInt16LE(1, 2);
dir.writeUInt16LE(1, 4);
dir.set([SIZE, SIZE, 0, 0], 6);
dir.writeUInt16LE(1, 10);
dir.writeUInt16LE(32, 12);
dir.writeUInt32LE(png.length, 14);
dir.writeUInt32LE(22, 18);
writeFileSync(fileURLToPath(new URL('../console/favicon.ico', import.meta.url)), Buffer.concat([dir, png]));
