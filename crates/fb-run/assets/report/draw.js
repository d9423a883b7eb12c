// Draws the report's charts with uPlot from the JSON in #fb-charts. Every
// chart's data is also in the table below it, so the page reads without
// this script. Failures go to the console (the CI check fails on them).
(function () {
  "use strict";
  var charts = JSON.parse(document.getElementById("fb-charts").textContent);
  var drawn = 0;
  function utc(ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); }
  function draw(c) {
    var el = document.getElementById(c.id);
    if (!el) { throw new Error("no element for chart " + c.id); }
    var width = Math.max(320, Math.min(960, (el.parentNode.clientWidth || 900) - 8));
    var bars = c.kind === "bars";
    var series = [{ label: bars ? "bin" : "window (UTC)" }];
    var data = [c.x];
    c.series.forEach(function (s) {
      var one = { label: s.label, stroke: s.color, width: 2, spanGaps: false };
      if (s.dashed) { one.dash = [6, 4]; one.width = 1; }
      if (bars) {
        one.fill = s.color;
        one.paths = uPlot.paths.bars({ size: [0.8 / c.series.length, 80], gap: 1 });
        one.points = { show: false };
      }
      series.push(one);
      data.push(s.values);
    });
    var opts = {
      width: width,
      height: 260,
      series: series,
      legend: { show: true },
      scales: bars ? {
        x: { time: false, range: [-0.5, c.x.length - 0.5] },
        // Counts: bars start at zero, or their heights would mislead.
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } }
      } : { x: { time: true } },
      axes: [
        bars ? {
          splits: function () { return c.x; },
          values: function (u, splits) {
            return splits.map(function (i) { return c.labels[i] === undefined ? "" : c.labels[i]; });
          },
          rotate: -30,
          size: 100
        } : {
          // UTC, 24 hours: times within two days, dates beyond.
          values: function (u, splits) {
            var span = c.x[c.x.length - 1] - c.x[0];
            return splits.map(function (s) {
              var iso = new Date(s * 1e3).toISOString();
              return span < 2 * 86400 ? iso.slice(11, 16) : iso.slice(0, 10);
            });
          }
        },
        { size: 60 }
      ]
    };
    if (!bars) { opts.tzDate = utc; }
    if (c.mark) {
      opts.hooks = {
        draw: [function (u) {
          var x = u.valToPos(c.mark.at - 0.5, "x", true);
          var ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = "#c0392b";
          ctx.setLineDash([4, 3]);
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.restore();
        }]
      };
    }
    new uPlot(opts, data, el);
    var table = el.parentNode.querySelector("details.data");
    if (table) { table.open = false; }
    drawn += 1;
  }
  charts.forEach(function (c) {
    try { draw(c); } catch (e) { console.error("chart " + c.id + ": " + e); }
  });
  document.body.setAttribute("data-charts-drawn", String(drawn));
})();
