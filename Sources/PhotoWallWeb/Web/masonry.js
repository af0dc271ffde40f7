// The wall's masonry: cards keep their DOM order (newest first, as the keyboard and screen readers meet
// them) and are placed with left/top in as many columns as the width holds, each new card under the
// shortest column. A card's column never changes while the column count stays, so a card that grows
// (comments opened) only moves the cards below it in its own column, and a new page only adds below.
// Heights are known before the photos load (width/height attributes), so nothing moves as they arrive.

export class Masonry {
  /** @param container the feed element; @param minColumnRem the narrowest column, in rem. */
  constructor(container, { minColumnRem = 17 } = {}) {
    this.container = container;
    this.minColumnRem = minColumnRem;
    this.columns = 0;
    this.width = 0;
    this.heights = [];
    this.scheduled = false;
    container.classList.add('masonry');
    this.cardObserver = new ResizeObserver(() => this.reflow());
    new ResizeObserver(() => {
      if (this.container.clientWidth !== this.width) this.layoutAll();
    }).observe(container);
  }

  metrics() {
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    const gap = parseFloat(getComputedStyle(this.container).getPropertyValue('--gap')) * rem || rem;
    const width = this.container.clientWidth;
    const columns = Math.max(1, Math.floor((width + gap) / (this.minColumnRem * rem + gap)));
    return { width, gap, columns, columnWidth: (width - gap * (columns - 1)) / columns };
  }

  /** Places every card again (first use, a new column count, a card put first). */
  layoutAll() {
    const m = this.metrics();
    this.width = m.width;
    this.columns = m.columns;
    this.columnWidth = m.columnWidth;
    this.gap = m.gap;
    this.heights = new Array(m.columns).fill(0);
    this.place([...this.container.children], true);
  }

  /** Places cards just appended at the end (a new page). */
  append(cards) {
    if (this.columns === 0 || this.container.clientWidth !== this.width) { this.layoutAll(); return; }
    this.place(cards, false);
  }

  place(cards, all) {
    // Widths first, then read every height in one layout, then positions: no intermediate frame is painted.
    for (const c of cards) c.style.width = `${this.columnWidth}px`;
    const sizes = cards.map((c) => c.offsetHeight);
    cards.forEach((c, i) => {
      let col = 0;
      for (let k = 1; k < this.columns; k++) if (this.heights[k] < this.heights[col] - 1) col = k;
      c.dataset.column = String(col);
      c.style.left = `${col * (this.columnWidth + this.gap)}px`;
      c.style.top = `${this.heights[col]}px`;
      this.heights[col] += sizes[i] + this.gap;
      if (!all || !c.dataset.observed) { this.cardObserver.observe(c); c.dataset.observed = '1'; }
    });
    this.setHeight();
  }

  /** Cards changed height: keep each in its column, stack the columns again. */
  reflow() {
    if (this.columns === 0) return;
    const cards = [...this.container.children];
    const sizes = cards.map((c) => c.offsetHeight);
    this.heights = new Array(this.columns).fill(0);
    cards.forEach((c, i) => {
      const col = Number(c.dataset.column ?? 0);
      if (col >= this.columns) return;
      const top = `${this.heights[col]}px`;
      if (c.style.top !== top) c.style.top = top;
      this.heights[col] += sizes[i] + this.gap;
    });
    this.setHeight();
  }

  setHeight() {
    const h = `${Math.max(0, Math.max(...this.heights) - this.gap)}px`;
    if (this.container.style.height !== h) this.container.style.height = h;
  }
}
