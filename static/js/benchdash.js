// benchdash page behaviour, loaded with `defer` after htmx.
// Figures are built on the server; each chart is a <div data-figure="ID"> whose JSON sits in
// <script type="application/json" id="ID"> (the json_data filter). htmx.onLoad runs for the
// first page and for every fragment htmx swaps in, so charts in swapped content are handled too.
//
// plotly.js is the cartesian bundle (scatter, bar, heatmap: reports/staticfiles.py), whose address a chart page
// names in <meta id="plotly-js">. It is fetched only once the page's first paint is on screen (whenPlotly), so
// the first chart waits for no large script, and the controls answer first.
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

  // plotly.js runs from a script element added here. It is asked for after the frame that shows the first
  // paints (a timer set from that frame's animation callback runs once the frame is painted): the charts' data
  // is on screen before a byte of plotly.js is fetched. The moment is marked "benchdash:first-paint".
  var plotlyLoading = null;

  function whenPlotly(fn) {
    if (typeof Plotly !== "undefined") {
      fn();
      return;
    }
    if (!plotlyLoading) {
      var meta = document.getElementById("plotly-js");
      if (!meta) return;
      plotlyLoading = document.createElement("script");
      plotlyLoading.src = meta.content;
      var fetchPlotly = function () { document.head.appendChild(plotlyLoading); };
      if (window.requestAnimationFrame) {
        requestAnimationFrame(function () { setTimeout(fetchPlotly, 0); });
      } else {
        setTimeout(fetchPlotly, 0);
      }
    }
    plotlyLoading.addEventListener("load", fn, { once: true });
  }

  function draw(root) {
    var sketched = false;
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      sketched = sketch(el) || sketched;
      schedule(el);
    });
    if (sketched && window.performance && performance.mark && !performance.getEntriesByName("benchdash:first-paint").length) {
      performance.mark("benchdash:first-paint");
    }
  }

  // A first paint of each line or bar chart from its figure, drawn at once as plain SVG while plotly.js (1.5 MB)
  // is still on its way: the data shows in the first frames, and plotly.js takes the chart over (drawOne) with
  // its hover, zoom and legend. Lines, markers, bars, the y axes, the title and the horizontal reference lines;
  // any other trace (a heatmap) waits for plotly.js.
  var SVG = "http://www.w3.org/2000/svg";

  function node(parent, name, attrs, text) {
    var el = document.createElementNS(SVG, name);
    for (var key in attrs) el.setAttribute(key, attrs[key]);
    if (text !== undefined) el.textContent = text;
    parent.appendChild(el);
    return el;
  }

  function extent(traces, axis, layout) {
    var settings = layout[axis === "y2" ? "yaxis2" : "yaxis"] || {};
    var log = settings.type === "log";
    if (settings.range) return { low: settings.range[0], high: settings.range[1], log: log };
    var low = Infinity;
    var high = -Infinity;
    traces.forEach(function (t) {
      if ((t.yaxis || "y") !== axis) return;
      (t.y || []).forEach(function (v) {
        if (typeof v !== "number" || !isFinite(v) || (log && v <= 0)) return;
        var y = log ? Math.log10(v) : v;
        low = Math.min(low, y);
        high = Math.max(high, y);
      });
    });
    if (low === Infinity) return null;
    if (settings.rangemode === "tozero" || hasBars(traces, axis)) low = Math.min(0, low);
    var pad = (high - low || Math.abs(high) || 1) * 0.05;
    return { low: low === 0 ? 0 : low - pad, high: high + pad, log: log };
  }

  // About four round steps (1, 2 or 5 × a power of ten) over the axis.
  function niceStep(span) {
    var power = Math.pow(10, Math.floor(Math.log10(span / 4)));
    var m = span / 4 / power;
    return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * power;
  }

  function hasBars(traces, axis) {
    return traces.some(function (t) { return t.type === "bar" && (t.yaxis || "y") === axis; });
  }

  // A chart's figure from its JSON script element; lines sent without x (layout.meta.x_from_axis: their x is the
  // x axis's categories, reports.charts.for_the_page) get them back.
  function figureOf(source) {
    var figure = JSON.parse(source.textContent);
    var layout = figure.layout || {};
    if (layout.meta && layout.meta.x_from_axis) {
      (figure.data || []).forEach(function (t) {
        if (!t.x && !t.xaxis) t.x = layout.xaxis.categoryarray.slice();
      });
    }
    return figure;
  }

  function sketch(el) {
    if (el.dataset.drawn || el.querySelector("svg.first-paint")) return;
    var source = document.getElementById(el.dataset.figure);
    if (!source) return;
    var figure = figureOf(source);
    var traces = figure.data || [];
    var layout = figure.layout || {};
    if (!traces.length || traces.some(function (t) { return t.type !== "scatter" && t.type !== "bar"; })) return;
    var categories = [];
    var seen = {};
    traces.forEach(function (t) {
      (t.x || []).forEach(function (x) {
        if (!(x in seen)) {
          seen[x] = categories.length;
          categories.push(x);
        }
      });
    });
    var width = el.clientWidth || 600;
    var height = layout.height || 400;
    var y1 = extent(traces, "y", layout);
    var y2 = extent(traces, "y2", layout);
    var box = { left: 56, right: width - (y2 ? 56 : 16), top: layout.title ? 40 : 12, bottom: height - 70 };
    var step = (box.right - box.left) / Math.max(categories.length, 1);
    var svg = node(el, "svg", { "class": "first-paint", width: width, height: height, "aria-hidden": "true" });
    if (layout.title && layout.title.text) {
      node(svg, "text", { x: 4, y: 22, "font-size": 15 }, layout.title.text.replace(/<br>/g, " ").replace(/<[^>]*>/g, ""));
    }
    function yOf(range, v) {
      var y = range.log ? Math.log10(v) : v;
      return box.bottom - ((y - range.low) / (range.high - range.low)) * (box.bottom - box.top);
    }
    function xOf(x) { return box.left + (seen[x] + 0.5) * step; }
    [[y1, box.left - 6, "end"], [y2, box.right + 6, "start"]].forEach(function (axis) {
      var range = axis[0];
      if (!range) return;
      var step = niceStep(range.high - range.low);
      for (var v = Math.ceil(range.low / step) * step; v <= range.high + step * 1e-9; v += step) {
        var value = range.log ? Math.pow(10, v) : v;
        var y = yOf(range, value);
        node(svg, "text", { x: axis[1], y: y + 4, "font-size": 11, "text-anchor": axis[2], fill: "#555" },
          Math.abs(value) >= 1000 ? Math.round(value).toLocaleString("en") : String(+value.toPrecision(3)));
        if (axis[2] === "end") node(svg, "line", { x1: box.left, x2: box.right, y1: y, y2: y, stroke: "#e5e8ee" });
      }
    });
    (layout.shapes || []).forEach(function (shape) {
      var range = shape.yref === "y2" ? y2 : y1;
      if (shape.type !== "line" || shape.y0 !== shape.y1 || !range) return;
      var y = yOf(range, shape.y0);
      if (y < box.top || y > box.bottom) return;
      node(svg, "line", { x1: box.left, x2: box.right, y1: y, y2: y, stroke: (shape.line || {}).color || "#888",
        "stroke-dasharray": (shape.line || {}).dash === "dot" ? "2 3" : "" });
    });
    var every = Math.ceil(categories.length / Math.max(1, Math.floor((box.right - box.left) / 40)));
    categories.forEach(function (x, i) {
      if (i % every) return;
      var label = String(x).split("<br>")[0];
      node(svg, "text", { "font-size": 10, fill: "#555", "text-anchor": "end",
        transform: "translate(" + xOf(x) + "," + (box.bottom + 12) + ") rotate(-45)" }, label);
    });
    traces.forEach(function (t) {
      var range = (t.yaxis || "y") === "y2" ? y2 : y1;
      if (!range) return;
      var colour = (t.marker && t.marker.color) || (t.line && t.line.color) || "#444";
      if (t.type === "bar") {
        (t.y || []).forEach(function (v, i) {
          if (typeof v !== "number") return;
          var top = yOf(range, v);
          node(svg, "rect", { x: xOf(t.x[i]) - step * 0.4, width: step * 0.8, y: top,
            height: Math.max(0, yOf(range, range.log ? Math.pow(10, range.low) : range.low) - top), fill: colour });
        });
        return;
      }
      var path = "";
      var pen = "M";
      (t.y || []).forEach(function (v, i) {
        if (typeof v !== "number" || !isFinite(v) || (range.log && v <= 0)) {
          pen = "M";
          return;
        }
        var y = Math.min(Math.max(yOf(range, v), box.top), box.bottom);
        path += pen + xOf(t.x[i]).toFixed(1) + " " + y.toFixed(1);
        pen = "L";
        if (categories.length <= 80) node(svg, "circle", { cx: xOf(t.x[i]), cy: y, r: 3, fill: colour });
      });
      node(svg, "path", { d: path, fill: "none", stroke: colour, "stroke-width": 1.5 });
    });
    return true;
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
    var figure = figureOf(source);
    var config = el.dataset.config ? JSON.parse(document.getElementById(el.dataset.config).textContent) : {};
    var first = el.querySelector("svg.first-paint");
    if (first) first.remove();
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

  // What a page asks for after its first paint (the drill-down's stories and suite metrics: hx-trigger
  // "benchdash:painted from:body") waits until the frame that shows the charts is painted and the browser is
  // idle: asked for with the page, it held one of the server's workers while the page's scripts were fetched.
  var painted = false;

  function announcePainted() {
    if (painted) return;
    painted = true;
    var announce = function () {
      idle(function () { document.body.dispatchEvent(new CustomEvent("benchdash:painted")); }, { timeout: 1000 });
    };
    if (window.requestAnimationFrame) {
      requestAnimationFrame(function () { setTimeout(announce, 0); });
    } else {
      setTimeout(announce, 0);
    }
  }

  htmx.onLoad(function (root) {
    draw(root);
    uploadProgress(root);
    if (root === document.body) announcePainted();
  });
})();
