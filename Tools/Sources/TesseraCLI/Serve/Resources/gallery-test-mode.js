"use strict";
// The gallery's browser test mode, appended to the page by `tessera serve --gallery-report FILE`
// (GalleryTestMode.swift; docs/SERVING.md, "Gallery"). It drives the page through window.tesseraGallery.
// With ?autoscroll=1 it scrolls through every image: it rests on one screen after another, each until the
// page has settled (every cell on screen shows its full picture, nothing in flight), with a fling over
// three screens (6 frames, about 24 px/ms) after every third rest. With &report=1 it then POSTs its
// report to /gallery/report.
(() => {
  const params = new URLSearchParams(location.search);
  const gallery = window.tesseraGallery;
  if (params.get("autoscroll") !== "1" || !gallery) return;
  const reportBack = params.get("report") === "1";
  const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // Whether `promise` resolved within `ms` milliseconds.
  const within = (promise, ms) => Promise.race([promise.then(() => true), delay(ms).then(() => false)]);

  async function autoscroll() {
    const scroller = gallery.scroller;
    const visited = new Set(), notFull = [], frameTimes = [];
    let rests = 0, flings = 0, restTimeouts = 0, recording = true, lastFrame = 0;
    const frame = (now) => {
      if (lastFrame) frameTimes.push(now - lastFrame);
      lastFrame = now;
      if (recording) requestAnimationFrame(frame);
    };
    const restAt = async (top) => {
      if (Math.abs(scroller.scrollTop - top) >= 1) {
        const scrolled = gallery.scrolled();
        scroller.scrollTop = top;
        await within(scrolled, 10000);
      }
      if (!(await within(gallery.settled(), 120000))) restTimeouts++;
      await gallery.nextFrame();
      rests++;
      for (const cell of gallery.onScreen()) {
        visited.add(cell.index);
        if (!cell.shown) notFull.push({ index: cell.index, path: cell.path, level: cell.level, failed: cell.failed });
      }
    };
    const fling = async (from, to, frames) => {
      flings++;
      for (let f = 1; f <= frames; f++) {
        scroller.scrollTop = from + (to - from) * f / frames;
        await gallery.nextFrame();
      }
    };
    await gallery.nextFrame();
    const rowHeight = gallery.geometry().rowHeight;
    const step = Math.max(1, Math.floor(scroller.clientHeight / rowHeight)) * rowHeight;
    const maxTop = Math.max(0, scroller.scrollHeight - scroller.clientHeight);
    const tops = [];
    for (let t = 0; t < maxTop; t += step) tops.push(t);
    tops.push(maxTop);
    const start = performance.now();
    requestAnimationFrame(frame);
    for (let k = 0; k < tops.length; k++) {
      await restAt(tops[k]);
      if (k % 3 === 0 && k + 3 < tops.length) await fling(tops[k], tops[k + 3], 6);
    }
    recording = false;
    const seconds = (performance.now() - start) / 1000;
    const frames = gallery.summary(frameTimes);
    return Object.assign({ userAgent: navigator.userAgent }, gallery.measurements(), {
      visited: visited.size, notFullCount: notFull.length, notFull: notFull.slice(0, 50),
      rests, flings, restTimeouts, seconds: Math.round(seconds * 10) / 10,
      frames: Object.assign(frames, { fps: frames.count ? Math.round(frames.count / seconds * 10) / 10 : null }),
    });
  }

  async function run() {
    if (!(await gallery.ready)) return;
    const report = await autoscroll();
    const done = ` · autoscroll: ${report.visited} in ${Math.round(report.seconds)} s`;
    gallery.note(done);
    if (!reportBack) return;
    const sent = await fetch("/gallery/report", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(report) });
    gallery.note(done + (sent.ok ? ", reported" : `, report refused (${sent.status})`));
  }

  run().catch((error) => gallery.note(" · autoscroll failed: " + error));
})();
