// benchdash page behaviour, loaded with `defer` after htmx and plotly.js.
// Figures are built on the server; each chart is a <div data-figure="ID"> whose JSON sits in
// <script type="application/json" id="ID"> (Django's json_script). htmx.onLoad runs for the
// first page and for every fragment htmx swaps in, so charts in swapped content are drawn too.
(function () {
  "use strict";

  function draw(root) {
    if (typeof Plotly === "undefined") return;
    root.querySelectorAll("[data-figure]").forEach(function (el) {
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
    });
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
