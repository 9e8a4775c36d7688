// benchdash page behaviour, loaded with `defer` after htmx and plotly.js.
// Figures are built on the server; each chart is a <div data-figure="ID"> whose JSON sits in
// <script type="application/json" id="ID"> (Django's json_script). htmx.onLoad runs for the
// first page and for every fragment htmx swaps in, so charts in swapped content are drawn too.
(function () {
  "use strict";

  // Charts are drawn when they come into view: a comparison page carries one per group plus a heatmap,
  // and drawing only what is on screen keeps the page usable at once even with 60 versions.
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        drawOne(entry.target);
      }
    });
  }, { rootMargin: "200px" }) : null;

  // plotly.js (4.6 MB) is fetched early (<link rel="preload" id="plotly-js">) but run only once the page
  // has been parsed: running it takes about a second, and the tables and controls should not wait for it.
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
    if (typeof Plotly === "undefined") {
      whenPlotly(function () { draw(root); });
      return;
    }
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (el.dataset.drawn || el.dataset.waiting) return;
      if (observer) {
        el.dataset.waiting = "1";
        observer.observe(el);
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
