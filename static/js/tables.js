// Data tables: sortable columns, "Copy as Markdown" and "CSV" on every table in a .table-wrap.
//
// One script for every page: htmx.onLoad runs it for the first page and for every fragment htmx swaps
// in. A table opts out with data-plain. What a cell exports and sorts by is its text, or its
// data-value when the text is shortened for the screen; elements with class "no-export" (a "diff with
// base" link in a header) are left out of the text. data-tools-in="ID" puts the toolbar in element ID. Rows of class "group-row" head a group: sorting
// keeps each group's rows under their header, and the exports carry the group as a first column. Rows of
// class "detail-row" tell more about the row above them across its columns: sorting moves them with that
// row, and the exports give each such pair one row (the detail's text as a last column named by the table's
// data-detail-column, or left out without one). A header cell with data-noexport (a tick box's column) is
// left out of the exports.
(function () {
  "use strict";

  function cellText(cell) {
    if (cell.dataset.value !== undefined) return cell.dataset.value;
    var copy = cell.cloneNode(true);
    copy.querySelectorAll(".no-export, .sort-mark, script").forEach(function (el) { el.remove(); });
    copy.querySelectorAll("br").forEach(function (br) { br.replaceWith(" "); });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  // The header row that names the columns: the last row of the thead, expanded over colspans.
  function headerCells(table) {
    var rows = table.tHead ? table.tHead.rows : [];
    if (!rows.length) return [];
    return Array.prototype.slice.call(rows[rows.length - 1].cells);
  }

  function isDetail(tr) {
    return tr.classList.contains("detail-row");
  }

  // The table as a header and rows of texts (and whether each column is numeric), for both exports.
  function matrix(table) {
    var heads = headerCells(table);
    var kept = heads.map(function (th) { return th.dataset.noexport === undefined; });
    function keep(cells) { return cells.filter(function (_, i) { return kept[i] !== false; }); }
    var header = keep(heads.map(cellText));
    var numeric = keep(heads.map(function (th) { return th.classList.contains("num"); }));
    var grouped = table.querySelector("tbody tr.group-row") !== null;
    var detailColumn = table.dataset.detailColumn;
    var rows = [];
    var group = "";
    var last = null;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (tr) {
        if (tr.hidden) return;
        if (tr.classList.contains("group-row")) {
          group = cellText(tr.cells[0]);
          return;
        }
        if (isDetail(tr)) {
          if (last && detailColumn) last.push(cellText(tr.cells[0]));
          return;
        }
        var row = [];
        Array.prototype.forEach.call(tr.cells, function (cell) {
          row.push(cellText(cell));
          for (var i = 1; i < (cell.colSpan || 1); i++) row.push("");
        });
        row = keep(row);
        if (detailColumn) while (row.length < header.length) row.push("");
        last = grouped ? [group].concat(row) : row;
        rows.push(last);
      });
    });
    if (detailColumn) {
      header = header.concat([detailColumn]);
      numeric = numeric.concat([false]);
      rows.forEach(function (row) { while (row.length < header.length + (grouped ? 1 : 0)) row.push(""); });
    }
    if (grouped) {
      header = ["Group"].concat(header);
      numeric = [false].concat(numeric);
    }
    return { header: header, numeric: numeric, rows: rows };
  }

  function markdown(m) {
    function line(cells) {
      return "| " + cells.map(function (c) { return String(c).replace(/\|/g, "\\|"); }).join(" | ") + " |";
    }
    var width = m.header.length;
    var out = [line(m.header), "|" + m.numeric.map(function (n) { return n ? " ---: " : " --- "; }).join("|") + "|"];
    m.rows.forEach(function (row) {
      var cells = row.slice(0, width);
      while (cells.length < width) cells.push("");
      out.push(line(cells));
    });
    return out.join("\n") + "\n";
  }

  function csv(m) {
    function field(value) {
      var text = String(value);
      return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
    }
    return [m.header].concat(m.rows).map(function (row) { return row.map(field).join(","); }).join("\r\n") + "\r\n";
  }

  function tableName(table) {
    if (table.dataset.name) return table.dataset.name;
    var el = table.closest(".table-wrap");
    while (el) {
      var prev = el.previousElementSibling;
      while (prev && !/^H[1-4]$/.test(prev.tagName)) prev = prev.previousElementSibling;
      if (prev) return cellText(prev);
      el = el.parentElement;
      if (el && /^H[1-4]$/.test(el.tagName)) return cellText(el);
    }
    return document.title.split("·")[0].trim() || "table";
  }

  function fileName(table) {
    var slug = tableName(table).toLowerCase().replace(/[^a-z0-9.]+/g, "-").replace(/^-+|-+$/g, "");
    return (slug || "table") + ".csv";
  }

  function copyText(text, done) {
    function fallback() {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      area.remove();
      done(ok);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else {
      fallback();
    }
  }

  // ------------------------------------------------------------------------------------------ sorting

  // A cell's sort key: a number when its text reads as one ("0.95", "12,345", "▼0.35", "−12.1%", "∞"), else its text.
  function sortKey(cell) {
    if (!cell) return { missing: true };
    // The pages print a minus sign (−12.1%), which a number parser would read as a prefix.
    var raw = (cell.dataset.sort !== undefined ? cell.dataset.sort : cellText(cell)).replace(/\u2212/g, "-");
    if (raw === "" || raw === "missing" || raw === "–" || raw === "-") return { missing: true };
    if (raw.indexOf("∞") !== -1) return { number: raw.indexOf("-") === 0 ? -Infinity : Infinity };
    var match = raw.replace(/,/g, "").match(/^[^\d.+-]*([+-]?\d*\.?\d+(?:e[+-]?\d+)?)\s*(%|[a-zA-Z/]*)?\s*[≈]?$/);
    if (match) return { number: parseFloat(match[1]) };
    // A cell showing a value and its ratio below it ("140,449 1.00") sorts by the first.
    var first = raw.replace(/,/g, "").match(/^[+-]?\d*\.?\d+/);
    if (first) return { number: parseFloat(first[0]) };
    return { text: raw.toLowerCase() };
  }

  function compare(a, b) {
    if (a.missing || b.missing) return a.missing && b.missing ? 0 : a.missing ? 1 : -1;
    if (a.number !== undefined && b.number !== undefined) return a.number - b.number;
    if (a.number !== undefined) return -1;
    if (b.number !== undefined) return 1;
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  function sortBy(table, index, th) {
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    headerCells(table).forEach(function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    Array.prototype.forEach.call(table.tBodies, function (body) {
      // Runs of rows between group headers are sorted on their own; a header stays first in its group.
      var segments = [[]];
      var heads = [null];
      var details = new Map();
      var owner = null;
      Array.prototype.forEach.call(body.rows, function (tr) {
        if (tr.classList.contains("group-row")) {
          segments.push([]);
          heads.push(tr);
          owner = null;
        } else if (isDetail(tr) && owner) {
          // A detail row travels with the row it tells more about.
          details.get(owner).push(tr);
        } else {
          owner = tr;
          details.set(tr, []);
          if (tr.dataset.order === undefined) tr.dataset.order = String(segments[segments.length - 1].length);
          segments[segments.length - 1].push(tr);
        }
      });
      var fragment = document.createDocumentFragment();
      segments.forEach(function (rows, i) {
        if (heads[i]) fragment.appendChild(heads[i]);
        rows
          .map(function (tr) { return { tr: tr, key: sortKey(tr.cells[index]) }; })
          .sort(function (x, y) {
            var order = compare(x.key, y.key);
            if (!ascending && !(x.key.missing || y.key.missing)) order = -order;
            return order || Number(x.tr.dataset.order) - Number(y.tr.dataset.order);
          })
          .forEach(function (item) {
            fragment.appendChild(item.tr);
            (details.get(item.tr) || []).forEach(function (detail) { fragment.appendChild(detail); });
          });
      });
      body.appendChild(fragment);
    });
  }

  function makeSortable(table) {
    var heads = headerCells(table);
    // Only when the body is a plain grid: a row spanning columns (other than a group header) breaks it.
    var plain = Array.prototype.every.call(table.querySelectorAll("tbody tr:not(.group-row):not(.detail-row)"), function (tr) {
      return tr.cells.length === heads.length;
    });
    if (!plain || heads.length === 0) return;
    heads.forEach(function (th, index) {
      if (th.colSpan > 1 || th.dataset.nosort !== undefined) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.title = "Sort by this column";
      // The header's text goes into the button; a line break, a link or a control ends it (no nested controls).
      while (th.firstChild && !(th.firstChild.nodeType === 1 && th.firstChild.matches("br, .no-export, a, input, button, select"))) {
        button.appendChild(th.firstChild);
      }
      var mark = document.createElement("span");
      mark.className = "sort-mark";
      mark.setAttribute("aria-hidden", "true");
      button.appendChild(mark);
      th.insertBefore(button, th.firstChild);
      button.addEventListener("click", function () { sortBy(table, index, th); });
    });
    table.classList.add("sortable");
  }

  // ------------------------------------------------------------------------------------------ toolbar

  function toolbar(table) {
    var bar = document.createElement("div");
    bar.className = "table-tools";
    var copy = document.createElement("button");
    copy.type = "button";
    copy.className = "link copy-markdown";
    copy.textContent = "Copy as Markdown";
    var download = document.createElement("button");
    download.type = "button";
    download.className = "link download-csv";
    download.textContent = "CSV";
    var status = document.createElement("span");
    status.className = "muted table-status";
    status.setAttribute("role", "status");
    copy.addEventListener("click", function () {
      var text = markdown(matrix(table));
      // Kept on the table as well: a test, or a user whose browser refuses the clipboard, can still read it.
      table.dataset.markdown = text;
      copyText(text, function (ok) {
        status.textContent = ok ? "copied " + (text.split("\n").length - 3) + " rows" : "the browser refused the clipboard";
      });
    });
    download.addEventListener("click", function () {
      var text = csv(matrix(table));
      table.dataset.csv = text;
      var link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
      link.download = fileName(table);
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    });
    bar.appendChild(copy);
    bar.appendChild(document.createTextNode(" · "));
    bar.appendChild(download);
    bar.appendChild(status);
    return bar;
  }

  var TALL_ROWS = 30;

  function enhance(root) {
    var scope = root.querySelectorAll ? root : document;
    var tables = Array.prototype.slice.call(scope.querySelectorAll(".table-wrap > table"));
    if (root.matches && root.matches(".table-wrap > table")) tables.push(root);
    tables.forEach(function (table) {
      if (table.dataset.enhanced || table.dataset.plain !== undefined || !table.tHead) return;
      table.dataset.enhanced = "1";
      var wrap = table.parentElement;
      // A table folded away under a chart (the heatmap's values) puts its toolbar by the chart instead.
      var place = table.dataset.toolsIn ? document.getElementById(table.dataset.toolsIn) : null;
      if (place) {
        place.appendChild(toolbar(table));
      } else {
        wrap.parentElement.insertBefore(toolbar(table), wrap);
      }
      if (table.tBodies.length && table.querySelectorAll("tbody tr").length > TALL_ROWS) wrap.classList.add("tall");
      makeSortable(table);
    });
  }

  window.benchdashTables = { markdown: function (t) { return markdown(matrix(t)); }, csv: function (t) { return csv(matrix(t)); } };

  // Enhanced when the browser is idle: a 60-version comparison's tables take a few tens of milliseconds, and a
  // click on the controls right after the page is parsed must not wait for them.
  var idle = window.requestIdleCallback || function (fn) { return setTimeout(fn, 50); };

  function later(root) {
    idle(function () { enhance(root); }, { timeout: 1000 });
  }

  if (window.htmx) {
    htmx.onLoad(later);
  } else {
    document.addEventListener("DOMContentLoaded", function () { later(document); });
  }
})();
