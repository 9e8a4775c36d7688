// benchdash page behaviour, loaded with `defer` after htmx.
// Figures are built on the server; each chart is a <div data-figure="ID"> whose JSON sits in
// <script type="application/json" id="ID"> (Django's json_script). htmx.onLoad runs for the
// first page and for every fragment htmx swaps in, so charts in swapped content are handled too.
//
// A line chart also comes drawn as SVG by the server (reports/svgchart.py; the div is .static-chart). It is
// shown as it is, and plotly.js -- 4.8 MB whose execution alone blocks the page for about a second -- runs
// only when the user first reaches for a chart (hover, tap or keyboard focus). That chart and the others in
// view then become plotly charts. Charts without an SVG (heatmap, bars) are drawn by plotly.js at once.
(function () {
  "use strict";

  // plotly.js draws charts as they come into view: a comparison page carries one per group plus a heatmap,
  // and drawing only what is on screen keeps the page usable even with 60 versions. The rest are drawn one
  // at a time when the browser is idle, so a printout or a full-page capture is never left with blank charts.
  var pending = [];
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        drawOne(entry.target);
      }
    });
  }, { rootMargin: "200px" }) : null;

  var idle = window.requestIdleCallback || function (fn) { return setTimeout(fn, 200); };
  var draining = false;

  function drainWhenIdle() {
    if (draining) return;
    draining = true;
    idle(function next() {
      var el = pending.shift();
      while (el && el.dataset.drawn) el = pending.shift();
      if (!el) {
        draining = false;
        return;
      }
      if (observer) observer.unobserve(el);
      drawOne(el);
      idle(next);
    });
  }

  // Printing happens now, not when the browser is idle: draw every waiting chart first.
  window.addEventListener("beforeprint", function () {
    if (typeof Plotly === "undefined") return;
    pending.splice(0).forEach(function (el) {
      if (observer) observer.unobserve(el);
      drawOne(el);
    });
  });

  // plotly.js is fetched early (<link rel="preload" id="plotly-js">) but executed only when a chart needs it.
  var plotlyLoading = null;

  function whenPlotly(fn) {
    if (typeof Plotly !== "undefined") {
      fn();
      return;
    }
    if (!plotlyLoading) {
      var link = document.getElementById("plotly-js");
      if (!link) return;
      plotlyLoading = document.createElement("script");
      plotlyLoading.src = link.href;
      document.head.appendChild(plotlyLoading);
    }
    plotlyLoading.addEventListener("load", fn, { once: true });
  }

  // Set by the user's first intent on a static chart: from then on every chart is drawn by plotly.js.
  var interactive = false;
  // A press, a tap or keyboard focus is intent at once; a mouse resting on a chart for HOVER_MS is too, so a
  // pointer merely crossing a chart while the page scrolls does not freeze it for plotly.js's second.
  var INTENT = ["pointerdown", "touchstart", "focusin"];
  var HOVER_MS = 150;

  function isStatic(el) {
    return el.classList.contains("static-chart");
  }

  function draw(root) {
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (isStatic(el) && !interactive) {
        armIntent(el);
      } else {
        schedule(el);
      }
    });
  }

  // Draw with plotly.js when it is in view, loading plotly.js first if need be.
  function schedule(el) {
    if (el.dataset.drawn || el.dataset.waiting) return;
    el.dataset.waiting = "1";
    whenPlotly(function () {
      if (observer) {
        observer.observe(el);
        pending.push(el);
        drainWhenIdle();
      } else {
        drawOne(el);
      }
    });
  }

  function armIntent(el) {
    if (el.dataset.armed) return;
    el.dataset.armed = "1";
    var timer = null;
    INTENT.forEach(function (type) {
      el.addEventListener(type, function () { onIntent(el); }, { passive: true });
    });
    el.addEventListener("pointerenter", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { onIntent(el); }, HOVER_MS);
    }, { passive: true });
    el.addEventListener("pointerleave", function () { clearTimeout(timer); }, { passive: true });
  }

  function onIntent(el) {
    if (el.dataset.drawn || el.dataset.waiting) return;
    interactive = true;
    el.dataset.waiting = "1";
    el.classList.add("chart-loading");
    var hint = el.querySelector(".chart-hint");
    if (hint) hint.textContent = "loading the interactive chart…";
    whenPlotly(function () {
      drawOne(el);
      document.querySelectorAll(".static-chart[data-figure]").forEach(schedule);
    });
  }

  function drawOne(el) {
    if (el.dataset.drawn) return;
    var source = document.getElementById(el.dataset.figure);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    var config = el.dataset.config ? JSON.parse(document.getElementById(el.dataset.config).textContent) : {};
    if (isStatic(el)) {
      // The plotly chart takes the drawing's place at the drawing's height, so nothing below it moves.
      // The hint line below the drawing goes too: the chart takes its height as well.
      var height = 0;
      el.querySelectorAll(".svgchart").forEach(function (svg) {
        height = Math.max(height, svg.getBoundingClientRect().height);
      });
      el.querySelectorAll(".chart-hint").forEach(function (hint) {
        height += hint.getBoundingClientRect().height;
      });
      if (height > 0) figure.layout.height = Math.round(height);
      el.querySelectorAll(".svgchart, .chart-hint").forEach(function (node) {
        node.remove();
      });
      el.classList.remove("static-chart", "chart-loading");
      el.removeAttribute("aria-describedby");
    }
    Plotly.newPlot(el, figure.data, figure.layout, config);
    el.dataset.drawn = "1";
    if (el.dataset.cellUrl) {
      // Heatmap: a click on a cell opens that microbenchmark's drill-down at that column.
      el.on("plotly_click", function (event) {
        var point = event.points && event.points[0];
        var meta = el.layout && el.layout.meta;
        if (!point || !meta) return;
        var microbenchmark = meta.microbenchmarks[point.y];
        if (microbenchmark === undefined || microbenchmark === null) return;
        var url = el.dataset.cellUrl.replace("MB_ID", microbenchmark) + "&column=" + encodeURIComponent(meta.keys[point.x]);
        window.location.assign(url);
      });
    }
  }

  function uploadProgress(root) {
    var form = root.querySelector ? root.querySelector("#upload-form") : null;
    if (!form || form.dataset.progressBound) return;
    form.dataset.progressBound = "1";
    form.addEventListener("htmx:xhr:progress", function (evt) {
      if (evt.detail.lengthComputable) {
        document.getElementById("upload-progress").value = (evt.detail.loaded / evt.detail.total) * 100;
      }
    });
  }

  htmx.onLoad(function (root) {
    draw(root);
    uploadProgress(root);
  });
})();
