#if Serving
/// The gallery page that `GET /gallery` serves: one HTML document with its style and script inline, no
/// build step and nothing loaded from elsewhere (the route's Content-Security-Policy enforces it).
///
/// What the script does (docs/SERVING.md, "Gallery"):
/// - asks `/gallery/list?dir=…&preset=…&lowres=…` for the image paths and the two presets;
/// - lays out a grid of cells of the full preset's size (in CSS pixels: preset pixels ÷ devicePixelRatio)
///   and keeps only the cells of the rows on screen in the DOM, a pool of `columns × (rows on screen + 1)`
///   elements where index `i` always lands in cell `i % pool`, so scrolling recycles cells and never
///   adds any;
/// - loads each image with `fetch` → blob → object URL → `Image.decode()`, so a cell only ever gets a
///   decoded picture; at most 6 requests run at once (Chromium's connections per host), the cells on
///   screen first, then the next screen in the scroll direction (the prefetch);
/// - measures the scroll speed (a moving average of pixels per millisecond between scroll events): above
///   2 px/ms the cells on screen ask for the low-resolution preset and nothing further is prefetched but
///   in low resolution; 150 ms after the last scroll event the grid is at rest and asks for the full preset;
/// - keeps loaded images for the rows on screen, the next screen and one row either side; whatever
///   leaves that window is dropped: its request is cancelled with its `AbortController` and its object
///   URL revoked;
/// - shows frames per second (from `requestAnimationFrame`) and how long images take to appear (from a
///   cell coming on screen to its first picture, and to its full-resolution picture; p50 and p95);
/// - with `?autoscroll=1` scrolls through every image by itself: rests one screen after another, each
///   until every cell on screen shows its full picture and the prefetch is done, with a fling over three
///   screens (at about 24 px/ms) after every third rest; with `&report=1` it then POSTs its measurements
///   to `/gallery/report` (only there when `--gallery-report FILE` is given).
enum GalleryPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tessera gallery</title>
<link rel="icon" href="data:,">
<style>
  html, body { margin: 0; height: 100%; background: #15171a; color: #d8dde3; font: 13px/1.4 system-ui, sans-serif; }
  #hud { position: fixed; left: 0; right: 0; top: 0; height: 30px; z-index: 2; display: flex; gap: 14px; align-items: center;
         padding: 0 10px; background: #000d; white-space: nowrap; overflow: hidden; font-size: 12px; font-variant-numeric: tabular-nums; }
  #hud b { color: #fff; font-weight: 600; }
  #hud .dim { color: #8a929c; }
  #scroller { position: absolute; left: 0; right: 0; top: 30px; bottom: 0; overflow-x: hidden; overflow-y: scroll; }
  #space { position: relative; width: 100%; }
  .cell { position: absolute; left: 0; top: 0; background: #2b2f35; overflow: hidden; contain: strict; border-radius: 3px; }
  .cell img { display: block; width: 100%; height: 100%; object-fit: cover; }
  .cell img:not([src]) { visibility: hidden; }
  .cell.error { background: #6a2228; }
</style>
</head>
<body>
<div id="hud">Tessera gallery: loading the listing…</div>
<div id="scroller"><div id="space"></div></div>
<script>
"use strict";
(() => {
  const params = new URLSearchParams(location.search);
  const autoscroll = params.get("autoscroll") === "1";
  const reportBack = params.get("report") === "1";
  const hud = document.getElementById("hud");
  const scroller = document.getElementById("scroller");
  const space = document.getElementById("space");

  const GAP = 4;                 // px between cells
  const MAX_IN_FLIGHT = 6;       // Chromium's connections per host over HTTP/1.1
  const FAST_PX_PER_MS = 2;      // smoothed scroll speed above which cells on screen get the low-resolution preset
  const REST_MS = 150;           // no scroll event for this long: at rest

  let listing = null, images = [], preset = null, lowres = null;
  let cols = 1, rows = 0, cellWidth = 1, cellHeight = 1, rowHeight = 1, offsetX = 0, rowsPerScreen = 1;
  const pool = [];               // {el, img, index, url}
  const store = new Map();       // image index → {level: 0 none | 1 low | 2 full, url, controllers: [, low, full], failed}
  const staleURLs = [];          // object URLs replaced by a better picture, revoked after the next render
  let inFlight = 0;
  let speed = 0, direction = 1, lastScrollTop = 0, lastScrollTime = 0, fast = false, resting = true, restTimer = 0, scrollEvents = 0;
  let visibleFrom = 0, visibleTo = 0;
  const episodes = new Map();    // index on screen → {since, appeared, full}
  const stats = { requested: [0, 0, 0], loaded: [0, 0, 0], aborted: 0, failures: [], prefetchHits: 0, leftBeforeAppearing: 0 };
  const appearTimes = [], fullTimes = [];
  const recentFrames = [], frameTimes = [];
  let recordFrames = false, lastFrame = 0, renderQueued = false, done = "";

  const encodePath = (path) => path.split("/").map(encodeURIComponent).join("/");
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));

  function summary(values) {
    const sorted = values.slice().sort((a, b) => a - b);
    const at = (p) => sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 10) / 10 : null;
    const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;
    return { count: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: at(1),
             mean: mean === null ? null : Math.round(mean * 10) / 10 };
  }

  function frame(now) {
    if (lastFrame) {
      const dt = now - lastFrame;
      recentFrames.push(dt);
      if (recentFrames.length > 60) recentFrames.shift();
      if (recordFrames) frameTimes.push(dt);
    }
    lastFrame = now;
    requestAnimationFrame(frame);
  }

  function showHUD() {
    if (!listing) return;
    const fps = recentFrames.length ? 1000 / (recentFrames.reduce((a, b) => a + b, 0) / recentFrames.length) : 0;
    const appear = summary(appearTimes.slice(-500)), full = summary(fullTimes.slice(-500));
    const ms = (v) => v === null ? "–" : String(Math.round(v));
    hud.innerHTML =
      `<span><b>Tessera</b> ${images.length.toLocaleString("en")}${listing.truncated ? "+" : ""} images</span>` +
      `<span><b>${fps.toFixed(1)}</b> fps</span>` +
      `<span>appear p50 <b>${ms(appear.p50)}</b> ms p95 <b>${ms(appear.p95)}</b> ms</span>` +
      `<span>full p50 <b>${ms(full.p50)}</b> ms p95 <b>${ms(full.p95)}</b> ms</span>` +
      `<span class="dim">${fast ? "fast: " + (lowres ? lowres.name : preset.name) : "rest: " + preset.name} · in flight ${inFlight}` +
      ` · cancelled ${stats.aborted} · prefetched ${stats.prefetchHits} · failed ${stats.failures.length}${done}</span>`;
  }

  function layout() {
    const dpr = window.devicePixelRatio || 1;
    cellWidth = Math.max(48, Math.round(preset.width / dpr));
    cellHeight = Math.max(48, Math.round(cellWidth * preset.height / preset.width));
    rowHeight = cellHeight + GAP;
    const width = scroller.clientWidth;
    cols = Math.max(1, Math.floor((width - GAP) / (cellWidth + GAP)));
    offsetX = Math.max(GAP, Math.floor((width - cols * (cellWidth + GAP) + GAP) / 2));
    rows = Math.ceil(images.length / cols);
    space.style.height = (rows * rowHeight + GAP) + "px";
    rowsPerScreen = Math.max(1, Math.ceil(scroller.clientHeight / rowHeight));
    const needed = cols * (rowsPerScreen + 1);
    while (pool.length < needed) {
      const el = document.createElement("div");
      el.className = "cell";
      const img = document.createElement("img");
      img.alt = "";
      el.appendChild(img);
      space.appendChild(el);
      pool.push({ el, img, index: -1, url: null });
    }
    for (const cell of pool) {
      cell.el.style.width = cellWidth + "px";
      cell.el.style.height = cellHeight + "px";
      release(cell);
    }
    render();
  }

  function release(cell) {
    cell.index = -1;
    cell.url = null;
    cell.img.removeAttribute("src");
    cell.el.classList.remove("error");
    cell.el.style.display = "none";
  }

  function scheduleRender() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => { renderQueued = false; render(); });
  }

  // Puts the images of the rows on screen into their cells, and starts what should load.
  function render() {
    if (!images.length) return;
    const now = performance.now();
    const top = scroller.scrollTop, height = scroller.clientHeight;
    const firstRow = Math.max(0, Math.floor((top - GAP - cellHeight) / rowHeight) + 1);
    const lastRow = Math.min(rows - 1, Math.ceil((top + height - GAP) / rowHeight) - 1);
    const from = firstRow * cols, to = Math.max(from, Math.min(images.length, (lastRow + 1) * cols));
    for (const [index, episode] of episodes) {
      if (index >= from && index < to) continue;
      if (!episode.appeared) stats.leftBeforeAppearing++;
      episodes.delete(index);
    }
    for (const cell of pool) if (cell.index >= 0 && (cell.index < from || cell.index >= to)) release(cell);
    for (let i = from; i < to; i++) {
      const cell = pool[i % pool.length];
      if (cell.index !== i) {
        release(cell);
        cell.index = i;
        const x = offsetX + (i % cols) * (cellWidth + GAP), y = GAP + Math.floor(i / cols) * rowHeight;
        cell.el.style.transform = `translate(${x}px, ${y}px)`;
        cell.el.style.display = "";
      }
      const entry = store.get(i);
      let episode = episodes.get(i);
      if (!episode) {
        episode = { since: now, appeared: false, full: false };
        episodes.set(i, episode);
        if (entry && entry.url) stats.prefetchHits++;
      }
      if (!entry) continue;
      if (entry.url && cell.url !== entry.url) {
        cell.img.src = entry.url;
        cell.url = entry.url;
      }
      if (entry.failed) cell.el.classList.add("error");
      if (entry.level >= 1 && !episode.appeared) { episode.appeared = true; appearTimes.push(now - episode.since); }
      if (entry.level === 2 && !episode.full) { episode.full = true; fullTimes.push(now - episode.since); }
    }
    while (staleURLs.length) URL.revokeObjectURL(staleURLs.pop());
    visibleFrom = from;
    visibleTo = to;
    schedule();
  }

  // Drops what left the window (cancelling its requests), then starts requests, cells on screen first.
  function schedule() {
    const count = images.length, screen = cols * rowsPerScreen;
    const aheadFrom = direction >= 0 ? visibleTo : Math.max(0, visibleFrom - screen);
    const aheadTo = direction >= 0 ? Math.min(count, visibleTo + screen) : visibleFrom;
    const keepFrom = Math.max(0, Math.min(aheadFrom, visibleFrom) - cols);
    const keepTo = Math.min(count, Math.max(aheadTo, visibleTo) + cols);
    for (const [index, entry] of store) {
      if (index >= keepFrom && index < keepTo) continue;
      for (const controller of entry.controllers) if (controller) { controller.abort(); stats.aborted++; }
      if (entry.url) URL.revokeObjectURL(entry.url);
      store.delete(index);
    }
    const onScreenLevel = fast && lowres ? 1 : 2;
    const aheadLevel = fast ? (lowres ? 1 : 0) : 2;
    const wanted = [];
    for (let i = visibleFrom; i < visibleTo; i++) wanted.push(i);
    const onScreen = wanted.length;
    if (aheadLevel) {
      if (direction >= 0) for (let i = aheadFrom; i < aheadTo; i++) wanted.push(i);
      else for (let i = aheadTo - 1; i >= aheadFrom; i--) wanted.push(i);
    }
    for (let k = 0; k < wanted.length && inFlight < MAX_IN_FLIGHT; k++) {
      const index = wanted[k], level = k < onScreen ? onScreenLevel : aheadLevel;
      let entry = store.get(index);
      if (!entry) {
        entry = { level: 0, url: null, controllers: [null, null, null], failed: false };
        store.set(index, entry);
      }
      if (entry.failed || entry.level >= level || entry.controllers[level] || (level === 1 && entry.controllers[2])) continue;
      load(index, entry, level);
    }
  }

  async function load(index, entry, level) {
    const controller = new AbortController();
    entry.controllers[level] = controller;
    inFlight++;
    stats.requested[level]++;
    const name = level === 2 ? preset.name : lowres.name;
    const path = images[index];
    try {
      const response = await fetch("/v1/" + encodeURIComponent(name) + "/" + encodePath(path), { signal: controller.signal });
      if (!response.ok) throw Object.assign(new Error("HTTP " + response.status), { status: response.status });
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const picture = new Image();
      picture.src = url;
      try {
        await picture.decode();
      } catch (error) {
        URL.revokeObjectURL(url);
        if (controller.signal.aborted) return;
        throw Object.assign(new Error("undecodable"), { status: "decode" });
      }
      if (controller.signal.aborted || store.get(index) !== entry) { URL.revokeObjectURL(url); return; }
      stats.loaded[level]++;
      if (level > entry.level) {
        if (entry.url) staleURLs.push(entry.url);
        entry.url = url;
        entry.level = level;
        scheduleRender();
      } else {
        URL.revokeObjectURL(url);
      }
    } catch (error) {
      if (error.name !== "AbortError" && !controller.signal.aborted) {
        entry.failed = true;
        stats.failures.push({ path, preset: name, status: error.status || String(error) });
        scheduleRender();
      }
    } finally {
      entry.controllers[level] = null;
      inFlight--;
      schedule();
    }
  }

  function onScroll() {
    const now = performance.now(), top = scroller.scrollTop;
    const dy = top - lastScrollTop, dt = Math.max(1, now - lastScrollTime);
    if (dy) direction = Math.sign(dy);
    const instant = Math.abs(dy) / dt;
    speed = dt < 100 ? 0.6 * speed + 0.4 * instant : instant;
    lastScrollTop = top;
    lastScrollTime = now;
    fast = speed > FAST_PX_PER_MS;
    resting = false;
    scrollEvents++;
    clearTimeout(restTimer);
    restTimer = setTimeout(() => { speed = 0; fast = false; resting = true; scheduleRender(); }, REST_MS);
    scheduleRender();
  }

  // Test mode: every screen at rest in turn, a fling over three screens after every third rest.
  async function runAutoscroll() {
    const until = async (predicate, timeout) => {
      const start = performance.now();
      while (!predicate()) {
        if (performance.now() - start > timeout) return false;
        await nextFrame();
      }
      return true;
    };
    const settled = () => {
      if (!resting || inFlight > 0) return false;
      for (let i = visibleFrom; i < visibleTo; i++) {
        const entry = store.get(i);
        if (!entry || (!entry.failed && entry.level < 2)) return false;
      }
      return true;
    };
    const visited = new Set(), notFull = [];
    let rests = 0, flings = 0, restTimeouts = 0;
    const restAt = async (top) => {
      if (Math.abs(scroller.scrollTop - top) >= 1) {
        const before = scrollEvents;
        scroller.scrollTop = top;
        await until(() => scrollEvents !== before, 10000);
      }
      if (!(await until(settled, 120000))) restTimeouts++;
      await nextFrame();
      rests++;
      for (let i = visibleFrom; i < visibleTo; i++) {
        visited.add(i);
        const entry = store.get(i), cell = pool[i % pool.length];
        const shown = entry && entry.level === 2 && cell.index === i && cell.url === entry.url && cell.img.complete && cell.img.naturalWidth > 0;
        if (!shown) notFull.push({ index: i, path: images[i], level: entry ? entry.level : 0, failed: !!(entry && entry.failed) });
      }
    };
    const fling = async (from, to, frames) => {
      flings++;
      for (let f = 1; f <= frames; f++) {
        scroller.scrollTop = from + (to - from) * f / frames;
        await nextFrame();
      }
    };
    await nextFrame();
    const step = Math.max(1, Math.floor(scroller.clientHeight / rowHeight)) * rowHeight;
    const maxTop = Math.max(0, scroller.scrollHeight - scroller.clientHeight);
    const tops = [];
    for (let t = 0; t < maxTop; t += step) tops.push(t);
    tops.push(maxTop);
    const start = performance.now();
    recordFrames = true;
    for (let k = 0; k < tops.length; k++) {
      await restAt(tops[k]);
      if (k % 3 === 0 && k + 3 < tops.length) await fling(tops[k], tops[k + 3], 6);
    }
    recordFrames = false;
    const seconds = (performance.now() - start) / 1000;
    const frames = summary(frameTimes);
    return {
      userAgent: navigator.userAgent, directory: listing.directory, images: images.length, truncated: listing.truncated,
      preset, lowres, columns: cols, cellWidth, cellHeight,
      viewport: { width: scroller.clientWidth, height: scroller.clientHeight, devicePixelRatio: window.devicePixelRatio },
      visited: visited.size, notFullCount: notFull.length, notFull: notFull.slice(0, 50),
      failureCount: stats.failures.length, failures: stats.failures.slice(0, 50),
      requested: { lowres: stats.requested[1], full: stats.requested[2] },
      loaded: { lowres: stats.loaded[1], full: stats.loaded[2] },
      aborted: stats.aborted, prefetchHits: stats.prefetchHits, leftBeforeAppearing: stats.leftBeforeAppearing,
      rests, flings, restTimeouts, seconds: Math.round(seconds * 10) / 10,
      frames: Object.assign(frames, { fps: frames.count ? Math.round(frames.count / seconds * 10) / 10 : null }),
      appear: summary(appearTimes), full: summary(fullTimes),
    };
  }

  async function main() {
    requestAnimationFrame(frame);
    setInterval(showHUD, 250);
    const query = new URLSearchParams();
    for (const name of ["dir", "preset", "lowres"]) if (params.get(name)) query.set(name, params.get(name));
    const response = await fetch("/gallery/list?" + query);
    const body = await response.json();
    if (!response.ok) { hud.textContent = "Tessera gallery: " + (body.message || response.status); return; }
    listing = body;
    images = body.images;
    preset = body.preset;
    lowres = body.lowres || null;
    if (!images.length) { hud.textContent = "Tessera gallery: no images in this directory"; return; }
    scroller.addEventListener("scroll", onScroll, { passive: true });
    window.addEventListener("resize", layout);
    layout();
    showHUD();
    if (!autoscroll) return;
    const report = await runAutoscroll();
    done = ` · autoscroll: ${report.visited} in ${Math.round(report.seconds)} s`;
    showHUD();
    if (reportBack) {
      const sent = await fetch("/gallery/report", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(report) });
      done += sent.ok ? ", reported" : `, report refused (${sent.status})`;
      showHUD();
    }
  }

  main().catch((error) => { hud.textContent = "Tessera gallery: " + error; });
})();
</script>
</body>
</html>
"""#
}
#endif
