/**
 * The browser side of the report's treemap, as script text for the page. Kept apart from the rest
 * of the page script because it is the one piece of real logic: a squarified layout (Bruls,
 * Huizing and van Wijk, 2000) that lays rectangles out row by row, each row along the shorter side
 * of what is left, adding an item to the row while that does not make the row's worst aspect ratio
 * worse. Pure functions, no DOM: `layoutTreemap(test)` can call it outside a browser.
 */
export const SQUARIFY_JS = String.raw`
/* items: [{ size, ... }] sorted by size descending; returns [{ item, x, y, w, h }]. */
function squarify(items, x, y, w, h) {
  const out = [];
  const total = items.reduce((n, it) => n + it.size, 0);
  if (total <= 0 || w <= 0 || h <= 0) return out;
  const scale = (w * h) / total;
  const areas = items.map((it) => it.size * scale);
  let i = 0;
  while (i < items.length) {
    const side = Math.min(w, h);
    let row = [areas[i]];
    let rowSum = areas[i];
    let j = i + 1;
    const worst = (sum, min, max) => Math.max((side * side * max) / (sum * sum), (sum * sum) / (side * side * min));
    let best = worst(rowSum, rowSum, rowSum);
    while (j < items.length) {
      const a = areas[j];
      const next = worst(rowSum + a, Math.min(row[row.length - 1], a), row[0]);
      if (next > best) break;
      row.push(a); rowSum += a; best = next; j++;
    }
    // Lay the row along the shorter side.
    const thick = rowSum / side;
    let off = 0;
    for (let k = 0; k < row.length; k++) {
      const len = row[k] / thick;
      if (w >= h) out.push({ item: items[i + k], x: x, y: y + off, w: thick, h: len });
      else out.push({ item: items[i + k], x: x + off, y: y, w: len, h: thick });
      off += len;
    }
    if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
    i = j;
  }
  return out;
}
`;
