// phptune report: draws the charts of a stored run from the JSON embedded in
// the page (#phptune-data). Every chart container is a div with data-chart.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("phptune-data").textContent);
  var charts = [];
  var phaseColors = { drift: "#888", knee: "#5470c6", workers: "#91cc75", categorical: "#fac858", holdout: "#ee6666", grid: "#73c0de", capacity: "#9a60b4" };

  function init(id) {
    var el = document.getElementById("chart-" + id);
    if (!el) { return null; }
    var c = echarts.init(el, null, { renderer: "canvas" });
    charts.push(c);
    return c;
  }
  function base(extra) {
    var o = {
      animation: false,
      tooltip: { trigger: "axis", confine: true },
      legend: { type: "scroll", top: 0 },
      grid: { left: 56, right: 56, top: 40, bottom: 40, containLabel: false },
      dataZoom: [{ type: "inside" }]
    };
    for (var k in extra) { o[k] = extra[k]; }
    // Tooltips stay inside the chart and wrap on a narrow screen.
    o.tooltip.confine = true;
    o.tooltip.extraCssText = "max-width: min(360px, 80vw); white-space: normal; overflow-wrap: anywhere;";
    return o;
  }

  // errorBars is a custom series drawing a vertical 95% interval with caps
  // at each [x, lo, hi].
  function errorBars(name, color, data, yAxisIndex) {
    return {
      name: name, type: "custom", silent: true, z: 1, yAxisIndex: yAxisIndex || 0,
      itemStyle: { color: color },
      encode: { x: 0, y: [1, 2] },
      data: data,
      renderItem: function (params, api) {
        var lo = api.coord([api.value(0), api.value(1)]), hi = api.coord([api.value(0), api.value(2)]);
        var w = 5, st = { stroke: color, lineWidth: 1.2 };
        return { type: "group", children: [
          { type: "line", shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style: st },
          { type: "line", shape: { x1: lo[0] - w, y1: lo[1], x2: lo[0] + w, y2: lo[1] }, style: st },
          { type: "line", shape: { x1: hi[0] - w, y1: hi[1], x2: hi[0] + w, y2: hi[1] }, style: st }
        ] };
      }
    };
  }
  function esc(x) {
    return String(x).replace(/[&<>"']/g, function (ch) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[ch]; });
  }

  function curve() {
    var c = init("curve");
    if (!c) { return; }
    var s = [];
    var colors = { start: "#5470c6", recommended: "#2e9e4f" };
    (data.configs || []).forEach(function (cv) {
      var col = colors[cv.label] || "#999";
      var rps = cv.points.map(function (p) { return { value: [p.connections, p.rps.v], trials: p.trials }; });
      s.push({ name: cv.label + " rps", type: "line", yAxisIndex: 0, symbolSize: 9, itemStyle: { color: col }, data: rps });
      s.push(errorBars(cv.label + " rps", col, cv.points.map(function (p) { return [p.connections, Math.max(0, p.rps.lo), p.rps.hi]; }), 0));
      s.push({ name: cv.label + " p99 ms", type: "line", yAxisIndex: 1, symbol: "diamond", symbolSize: 8, itemStyle: { color: col }, lineStyle: { type: "dashed" }, data: cv.points.map(function (p) { return [p.connections, p.p99_ms.v]; }) });
      s.push(errorBars(cv.label + " p99 ms", col, cv.points.map(function (p) { return [p.connections, Math.max(0, p.p99_ms.lo), p.p99_ms.hi]; }), 1));
    });
    (data.curves || []).forEach(function (cv) {
      s.push({ name: cv.label, type: "line", yAxisIndex: 0, symbolSize: 5, lineStyle: { width: 1 }, itemStyle: { color: "#aaa" }, data: cv.points.map(function (p) { return [p.connections, p.throughput_rps]; }) });
      s.push({ name: cv.label + " p99 ms", type: "line", yAxisIndex: 1, symbolSize: 5, lineStyle: { width: 1, type: "dashed" }, itemStyle: { color: "#aaa" }, data: cv.points.map(function (p) { return [p.connections, p.latency_p99_ms]; }) });
    });
    c.setOption(base({
      tooltip: { trigger: "item", confine: true, formatter: function (p) {
        var v = p.value || p.data.value || p.data;
        return esc(p.seriesName) + ": " + Number(v[1]).toFixed(1) + " at " + v[0] + " connections" + (p.data.trials ? "<br>trials " + esc(p.data.trials.join(", ")) : "");
      } },
      xAxis: { type: "value", name: "connections", nameLocation: "middle", nameGap: 26, min: 0, max: function (v) { return Math.ceil(v.max * 1.15 + 1); } },
      yAxis: [{ type: "value", name: "rps" }, { type: "value", name: "p99 ms" }],
      series: s
    }));
  }

  function knobs() {
    var obj = data.objective === "latency" ? "p99 ms" : "rps";
    (data.knobs || []).forEach(function (k, i) {
      var c = init("knob" + i);
      if (!c) { return; }
      // Trials at the same value are spread a little so they do not hide each other.
      var at = {}, byPhase = {}, bars = [];
      k.points.forEach(function (p) {
        var j = at[p.x] = (at[p.x] || 0) + 1;
        var x = p.x + (((j * 0.37) % 0.6) - 0.3);
        (byPhase[p.phase] = byPhase[p.phase] || []).push({ value: [x, p.y.v], n: p.n, label: p.label, status: p.status, lo: p.y.lo, hi: p.y.hi });
        bars.push([x, Math.max(0, p.y.lo), p.y.hi]);
      });
      var s = [errorBars("95% interval", "#999", bars)];
      Object.keys(byPhase).forEach(function (ph) {
        s.push({ name: ph, type: "scatter", symbolSize: 9, itemStyle: { color: phaseColors[ph] }, data: byPhase[ph] });
      });
      c.setOption(base({
        dataZoom: [],
        tooltip: { trigger: "item", confine: true, formatter: function (p) {
          var d = p.data;
          if (!d || d.n === undefined) { return ""; }
          return "trial " + d.n + " (" + esc(p.seriesName) + ", " + esc(d.status) + ")<br>" + esc(d.label) + "<br>" + d.value[1].toFixed(1) + " " + obj + " [" + d.lo.toFixed(1) + ", " + d.hi.toFixed(1) + "]";
        } },
        xAxis: { type: "value", name: k.knob, nameLocation: "middle", nameGap: 26, min: -0.5, max: k.values.length - 0.5,
          axisLine: { onZero: false }, splitLine: { show: false },
          axisTick: { customValues: k.values.map(function (v, j) { return j; }) },
          axisLabel: { customValues: k.values.map(function (v, j) { return j; }), formatter: function (x) {
            var v = k.values[Math.round(x)];
            if (v === undefined) { return ""; }
            return v + (v === k.start ? " (start)" : "") + (v === k.recommended && v !== k.start ? " (rec.)" : "");
          } } },
        yAxis: { type: "value", name: obj, scale: true, axisLine: { onZero: false } },
        series: s
      }));
    });
  }

  function trials() {
    var c = init("trials");
    if (!c) { return; }
    var byPhase = {};
    (data.trials || []).forEach(function (t) {
      (byPhase[t.phase] = byPhase[t.phase] || []).push({ value: [t.n, t.rps], label: t.label, status: t.status, conns: t.conns, p99: t.p99_ms });
    });
    var s = Object.keys(byPhase).map(function (ph) {
      return { name: ph, type: "scatter", symbolSize: 9, itemStyle: { color: phaseColors[ph] }, data: byPhase[ph] };
    });
    c.setOption(base({
      tooltip: {
        trigger: "item", confine: true,
        formatter: function (p) {
          var d = p.data;
          var e = esc;
          return "trial " + d.value[0] + " (" + e(p.seriesName) + ", " + e(d.status) + ")<br>" + e(d.label) + "<br>" + d.conns + " connections: " + d.value[1].toFixed(1) + " rps, p99 " + d.p99.toFixed(1) + " ms";
        }
      },
      xAxis: { type: "value", name: "trial", nameLocation: "middle", nameGap: 26, minInterval: 1 },
      yAxis: { type: "value", name: "rps" },
      series: s
    }));
  }

  // A line of one point draws nothing without its symbol: a 2-second run
  // (one observer sample) shows its point.
  function sym(d) { return d && d.length <= 1 ? "circle" : "none"; }

  function timelines() {
    (data.timelines || []).forEach(function (tl, i) {
      var cpu = init("cpu" + i);
      if (cpu) {
        var s = tl.cpu.map(function (g) { return { name: g.name, type: "line", stack: "cpu", areaStyle: {}, symbol: sym(g.data), symbolSize: 8, data: g.data }; });
        tl.machine.forEach(function (m) {
          if (m.name.indexOf("steal") === 0) { s.push({ name: "machine " + m.name, type: "line", symbol: sym(m.data), symbolSize: 8, lineStyle: { type: "dotted" }, data: m.data }); }
        });
        cpu.setOption(base({ xAxis: { type: "category", name: "s", data: tl.t }, yAxis: { type: "value", name: "% of a core" }, series: s,
          grid: { left: 56, right: 56, top: 40, bottom: 64 },
          dataZoom: [{ type: "inside" }, { type: "slider", height: 18, bottom: 8 }] }));
      }
      top(tl, i);
      var fpm = init("fpm" + i);
      if (fpm) {
        var fs = tl.workers.map(function (w) { return { name: w.name, type: "line", step: "end", symbol: sym(w.data), symbolSize: 8, data: w.data }; });
        (tl.queue || []).forEach(function (q) { fs.push({ name: q.name, type: "bar", yAxisIndex: 1, data: q.data }); });
        fpm.setOption(base({ xAxis: { type: "category", name: "s", data: tl.t }, yAxis: [{ type: "value", name: "workers", minInterval: 1 }, { type: "value", name: "queued", minInterval: 1 }], series: fs }));
      }
      var pss = init("pss" + i);
      if (pss) {
        pss.setOption(base({
          tooltip: { trigger: "axis", confine: true },
          xAxis: { type: "category", name: "worker pid", data: (tl.worker_pid || []).map(String) },
          yAxis: { type: "value", name: "MiB" },
          series: [{ name: "PSS", type: "bar", data: tl.worker_pss || [] }]
        }));
      }
    });
  }

  function bench() {
    var t = init("throughput");
    if (t) {
      var sec = data.series || [];
      var one = sym(sec);
      t.setOption(base({
        xAxis: { type: "category", name: "s", data: sec.map(function (s) { return s.t_s; }) },
        yAxis: [{ type: "value", name: "rps" }, { type: "value", name: "ms" }],
        series: [
          { name: "requests/s", type: "line", symbol: one, symbolSize: 8, data: sec.map(function (s) { return s.requests; }) },
          { name: "errors/s", type: "line", symbol: one, symbolSize: 8, data: sec.map(function (s) { return s.errors; }) },
          { name: "p50 ms", type: "line", yAxisIndex: 1, symbol: one, symbolSize: 8, data: sec.map(function (s) { return s.latency_p50_ms; }) },
          { name: "p99 ms", type: "line", yAxisIndex: 1, symbol: one, symbolSize: 8, data: sec.map(function (s) { return s.latency_p99_ms; }) }
        ]
      }));
    }
    var p = init("percentiles");
    if (p) {
      // x is 1/(1-p): 2 = p50, 10 = p90, 100 = p99 ... on a log axis.
      var pts = (data.percentiles || []).filter(function (q) { return q.percentile < 100; }).map(function (q) { return [1 / (1 - q.percentile / 100), q.value_ms]; });
      p.setOption(base({
        tooltip: { trigger: "axis", confine: true, formatter: function (ps) { var x = ps[0].data[0]; return "p" + (100 * (1 - 1 / x)).toPrecision(6) + ": " + ps[0].data[1].toFixed(2) + " ms"; } },
        xAxis: { type: "log", name: "percentile", nameLocation: "middle", nameGap: 26, min: 1, axisLabel: { formatter: function (x) { return "p" + (100 * (1 - 1 / x)).toPrecision(4).replace(/\.?0+$/, ""); } } },
        yAxis: { type: "value", name: "ms" },
        series: [{ name: "latency", type: "line", symbol: "none", data: pts }]
      }));
    }
    var e = init("errors");
    if (e) {
      var names = Object.keys(data.errors || {}).sort();
      e.setOption(base({ xAxis: { type: "category", data: names }, yAxis: { type: "value", name: "requests" }, series: [{ name: "errors", type: "bar", data: names.map(function (n) { return data.errors[n]; }) }] }));
    }
  }

  // capacity draws the latency-vs-rate curve of each capacity search:
  // p99 (and, for a single search, p50 and p90) against the asked rate,
  // passing steps as circles and failing ones as triangles, the SLO's
  // bounds as dashed lines and the bracket as a band.
  function capacity() {
    var c = init("capacity");
    if (!c || !data.capacity) { return; }
    var colors = ["#5470c6", "#2e9e4f", "#fac858"];
    var single = data.capacity.length === 1;
    var s = [], lo = Infinity, hi = 0;
    data.capacity.forEach(function (cv, i) {
      var col = colors[i % colors.length];
      var pts = cv.points.slice().sort(function (a, b) { return a.rate - b.rate || a.n - b.n; });
      pts.forEach(function (p) { lo = Math.min(lo, p.rate); hi = Math.max(hi, p.rate); });
      var ps = single ? [["p50", "p50_ms", "dotted"], ["p90", "p90_ms", "dashed"], ["p99", "p99_ms", "solid"]] : [["p99", "p99_ms", "solid"]];
      ps.forEach(function (q) {
        var line = { name: (single ? "" : cv.label + " ") + q[0], type: "line", itemStyle: { color: col }, lineStyle: { type: q[2], width: q[0] === "p99" ? 2 : 1 },
          symbolSize: q[0] === "p99" ? 10 : 5,
          data: pts.filter(function (p) { return p[q[1]] > 0; }).map(function (p) {
            return { value: [p.rate, p[q[1]]], symbol: p.pass ? "circle" : "triangle", step: p }; }) };
        if (q[0] === "p99") {
          line.markLine = { silent: true, symbol: "none", lineStyle: { type: "dashed", color: "#c23531" }, label: { formatter: "{b}" },
            data: (cv.bounds || []).map(function (b) { return { name: "p" + b.percentile + " bound", yAxis: b.max_ms }; }) };
          if (cv.capacity > 0 && cv.first_fail > 0) {
            line.markArea = { silent: true, itemStyle: { color: col, opacity: 0.12 }, data: [[{ xAxis: cv.capacity }, { xAxis: cv.first_fail }]] };
          }
        }
        s.push(line);
      });
    });
    var logX = hi / lo > 8;
    c.setOption(base({
      dataZoom: [],
      tooltip: { trigger: "item", confine: true, formatter: function (p) {
        var d = p.data && p.data.step;
        if (!d) { return ""; }
        return "step " + d.n + " (" + esc(d.phase) + "): " + d.rate + " rps asked, " + d.achieved.toFixed(1) + " answered<br>p50 " + d.p50_ms.toFixed(1) + " ms, p90 " + d.p90_ms.toFixed(1) + " ms, p99 " + d.p99_ms.toFixed(1) + " ms, errors " + d.errors_pct.toFixed(2) + "%<br>" +
          (d.pass ? "passed" : "failed: " + esc((d.reasons || []).join("; ")));
      } },
      xAxis: { type: logX ? "log" : "value", name: "asked rate (requests/s)", nameLocation: "middle", nameGap: 26, scale: true },
      yAxis: { type: "log", name: "latency ms" },
      series: s
    }));
  }

  // top builds a scrollable top below the CPU chart: a slider over the
  // samples and the process groups at the chosen one. Text is set with
  // textContent, never parsed as markup.
  function top(tl, i) {
    var anchor = document.getElementById("chart-cpu" + i);
    if (!anchor || !tl.top || tl.top.length === 0) { return; }
    var box = document.createElement("div");
    box.className = "top";
    box.id = "top" + i;
    var label = document.createElement("label");
    var slider = document.createElement("input");
    slider.type = "range"; slider.min = "0"; slider.max = String(tl.top.length - 1); slider.value = String(tl.top.length - 1);
    slider.setAttribute("aria-label", "sample");
    var head = document.createElement("p");
    head.className = "t";
    var wrap = document.createElement("div");
    wrap.className = "scroll";
    var table = document.createElement("table");
    wrap.appendChild(table);
    label.appendChild(slider);
    box.appendChild(label); box.appendChild(head); box.appendChild(wrap);
    anchor.parentNode.insertBefore(box, anchor.nextSibling);
    function cell(tr, tag, text, num) {
      var td = document.createElement(tag);
      td.textContent = text;
      if (num) { td.className = "n"; }
      tr.appendChild(td);
    }
    function show() {
      var r = tl.top[Number(slider.value)];
      head.textContent = "top at " + r.t + " s (sample " + (Number(slider.value) + 1) + " of " + tl.top.length + "): user " + r.user + "%, system " + r.system + "%, steal " + r.steal + "%, idle " + r.idle + "% of the machine; run queue " + r.runq + "; " + r.mem_available_mib + " MiB available";
      while (table.firstChild) { table.removeChild(table.firstChild); }
      var h = document.createElement("tr");
      ["group", "processes", "CPU % of a core", "RSS MiB", "PSS MiB"].forEach(function (t, j) { cell(h, "th", t, j > 0); });
      table.appendChild(h);
      (r.groups || []).forEach(function (g) {
        var tr = document.createElement("tr");
        cell(tr, "td", g.name); cell(tr, "td", g.procs, true); cell(tr, "td", g.cpu.toFixed(1), true); cell(tr, "td", g.rss_mib.toFixed(1), true); cell(tr, "td", g.pss_mib.toFixed(1), true);
        table.appendChild(tr);
      });
    }
    slider.addEventListener("input", show);
    show();
  }

  if (data.kind === "tune") { curve(); trials(); knobs(); capacity(); } else if (data.kind === "capacity") { capacity(); } else { bench(); }
  timelines();
  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  document.body.setAttribute("data-charts-drawn", String(charts.length));
})();
