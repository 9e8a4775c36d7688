// benchdash page behaviour, loaded with `defer` after htmx.
// Figures are built on the server; each chart is a <div data-figure="ID"> whose JSON sits in
// <script type="application/json" id="ID"> (Django's json_script). htmx.onLoad runs for the
// first page and for every fragment htmx swaps in, so charts in swapped content are handled too.
//
// plotly.js is the cartesian bundle (scatter, bar, heatmap: reports/staticfiles.py), fetched early through
// <link rel="preload" id="plotly-js"> and run once the page is parsed, so the controls answer first.
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

  // The preloaded plotly.js runs from a script element added here, after the page's own scripts.
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

  function draw(root) {
    root.querySelectorAll("[data-figure]").forEach(schedule);
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

  function drawOne(el) {
    if (el.dataset.drawn) return;
    var source = document.getElementById(el.dataset.figure);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    var config = el.dataset.config ? JSON.parse(document.getElementById(el.dataset.config).textContent) : {};
    Plotly.newPlot(el, figure.data, figure.layout, config);
    el.dataset.drawn = "1";
    el.style.minHeight = "";
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

  // A control that belongs to a form from outside it (form="…", as each group chart's own y-axis top does) is
  // part of the form's request but not of its element tree, so its change would not reach the form's
  // hx-trigger: pass it on.
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && !form.contains(event.target) && form.hasAttribute("hx-get")) htmx.trigger(form, "change");
  });

  htmx.onLoad(function (root) {
    draw(root);
    uploadProgress(root);
  });
})();
