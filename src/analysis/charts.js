/* SPDX-License-Identifier: MIT */
/*
 * Drawing shared by the HTML report (report_html.c inlines it after uPlot) and the web UI
 * (`iostrata serve` serves it as /ui/charts.js): DOM helpers, units for display, figures that
 * carry their JSON path, uPlot charts and canvas heatmaps. It computes nothing but units: the
 * callers pass the figures of the JSON they read. Every chart drawn is listed in
 * window.iostrataCharts ({title, xlabel, ylabel, canvas, plot: [x, y, w, h] in canvas pixels,
 * u: the uPlot or null}) so a test can check it is labelled and drawn. Text is only ever set
 * with textContent.
 */
(function () {
	"use strict";
	var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
	var D = { COLORS: COLORS };
	window.iostrataCharts = [];

	D.el = function (tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	};
	D.add = function (parent, child) { parent.appendChild(child); return child; };
	D.group = function (n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); };
	D.bytes = function (n) {
		var u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = 0, v = n;
		while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
		return i ? v.toFixed(1) + " " + u[i] : n + " B";
	};
	D.secs = function (s) {
		if (s < 0) return "-" + D.secs(-s);
		return s >= 1 ? s.toFixed(2) + " s" : s >= 1e-3 ? (s * 1e3).toFixed(2) + " ms" : (s * 1e6).toFixed(1) + " µs";
	};
	/* a figure of a JSON document: its text, with its path and exact value for tests */
	D.fig = function (path, value, text) {
		var e = D.el("span", "fig", text !== undefined ? text : D.group(value));
		e.setAttribute("data-fig", path);
		e.setAttribute("data-value", String(value));
		return e;
	};
	D.table = function (parent, head) {
		var t = D.add(parent, D.el("table"));
		var tr = D.add(D.add(t, D.el("thead")), D.el("tr"));
		head.forEach(function (h, i) { D.add(tr, D.el("th", i ? null : "l", h)); });
		return D.add(t, D.el("tbody"));
	};
	D.row = function (tb, cells) {
		var tr = D.add(tb, D.el("tr"));
		cells.forEach(function (c, i) {
			var td = D.add(tr, D.el("td", i ? null : "l"));
			if (c instanceof Node) td.appendChild(c); else if (c !== undefined && c !== null) td.textContent = c;
		});
		return tr;
	};
	D.byteTicks = function (u, vals) { return vals.map(function (v) { return D.bytes(v); }); };
	D.catTicks = function (labels) {
		return {
			xticks: function (u, vals) { return vals.map(function (v) { return labels[v] !== undefined ? labels[v] : ""; }); },
			xsplits: function () { return labels.map(function (l, i) { return i; }); }
		};
	};
	function width(parent, margin) {
		var w = parent.clientWidth || (parent.parentNode && parent.parentNode.clientWidth) || 800;
		return Math.min(1100, Math.max(600, w - margin));
	}
	D.register = function (c) { window.iostrataCharts.push(c); return c; };

	/* A uPlot chart: data [xs, ys...], series names, axis labels; bars for categories.
	 * opt: bars, xticks, xsplits, yticks, xvalue, height, hooks (uPlot's), marks ([{x0, x1}]:
	 * time ranges shaded behind the series). */
	D.chart = function (parent, title, xlabel, ylabel, data, names, opt) {
		opt = opt || {};
		var f = D.add(parent, D.el("figure", "chart"));
		D.add(f, D.el("figcaption", null, title));
		var series = [{ label: xlabel, value: opt.xvalue }];
		names.forEach(function (n, i) {
			var s = { label: n, stroke: COLORS[i % COLORS.length], width: 1.5 };
			if (opt.bars) {
				s.fill = COLORS[i % COLORS.length];
				s.paths = uPlot.paths.bars({ size: [0.8 / names.length, 60], align: 0,
					disp: { x0: { unit: 2, values: function () { return data[0].map(function () { return (i - (names.length - 1) / 2) * 0.8 / names.length; }); } } } });
				s.points = { show: false };
			}
			series.push(s);
		});
		var hooks = opt.hooks || {};
		if (opt.marks && opt.marks.length) {
			hooks.drawClear = (hooks.drawClear || []).concat([function (u) {
				var ctx = u.ctx;
				ctx.save();
				opt.marks.forEach(function (m) {
					var a = u.valToPos(m.x0, "x", true), b = u.valToPos(m.x1, "x", true);
					ctx.fillStyle = m.active ? "rgba(214,39,40,0.22)" : "rgba(255,127,14,0.12)";
					ctx.fillRect(Math.min(a, b), u.bbox.top, Math.max(2, Math.abs(b - a)), u.bbox.height);
				});
				ctx.restore();
			}]);
		}
		var u = new uPlot({
			width: width(parent, 20), height: opt.height || 260, hooks: hooks,
			scales: { x: { time: false, range: opt.bars ? function (u, lo, hi) { return [lo - 0.5, hi + 0.5]; } : null } },
			axes: [
				{ label: xlabel, grid: { show: false }, values: opt.xticks || (opt.bars ? null : function (u, v) { return v.map(function (x) { return x ? D.secs(x) : "0"; }); }), splits: opt.xsplits },
				{ label: ylabel, grid: { show: false }, size: 100, values: opt.yticks }
			],
			series: series
		}, data, f);
		D.register({ title: title, xlabel: xlabel, ylabel: ylabel, canvas: u.ctx.canvas,
			plot: [u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height], u: u });
		return u;
	};

	/* A heatmap on a canvas: rows (labels, top to bottom) × columns (equal steps from x0 to x1
	 * seconds, or x0 a text saying what they span), value(r, c) >= 0, darker for more on a log
	 * scale. The note under it says what the axes are. With numeric x0 and x1 the canvas has
	 * zoom(a, b): it redraws the columns that overlap [a, b] across its width (null: all of them),
	 * and says which it shows in data-range ("FIRST LAST": column indexes; data-x0 and data-w say
	 * where column 0 starts and how wide a column is: step, or the span over the columns). */
	D.heatmap = function (parent, title, xlabel, ylabel, rows, ncols, value, x0, x1, unit, step) {
		var f = D.add(parent, D.el("figure", "chart"));
		D.add(f, D.el("figcaption", null, title));
		var box = D.add(f, D.el("div", "heat"));
		D.add(box, D.el("div", "ylab", ylabel));
		var inner = D.add(box, D.el("div"));
		var W = Math.min(1000, Math.max(400, width(parent, 100))), rh = Math.max(1, Math.min(12, Math.floor(600 / Math.max(1, rows.length))));
		var c = D.add(inner, D.el("canvas"));
		c.width = W; c.height = rh * rows.length;
		var ctx = c.getContext("2d"), max = 0, r, k;
		for (r = 0; r < rows.length; r++)
			for (k = 0; k < ncols; k++) max = Math.max(max, value(r, k));
		function draw(k0, k1) {
			var cw = W / (k1 - k0 + 1);
			ctx.clearRect(0, 0, c.width, c.height);
			for (var r = 0; r < rows.length; r++)
				for (var k = k0; k <= k1; k++) {
					var v = value(r, k);
					if (!v) continue;
					var t = Math.log(1 + v) / Math.log(1 + max);
					ctx.fillStyle = "rgb(" + Math.round(255 - 224 * t) + "," + Math.round(255 - 136 * t) + "," + Math.round(255 - 75 * t) + ")";
					ctx.fillRect(Math.floor((k - k0) * cw), r * rh, Math.ceil(cw), rh);
				}
			c.setAttribute("data-range", k0 + " " + k1);
		}
		draw(0, Math.max(0, ncols - 1));
		var numeric = typeof x0 === "number";
		var span = numeric ? (x0 ? D.secs(x0) : "0") + " to " + D.secs(x1) : x0;
		var xl = D.add(inner, D.el("div", "note", xlabel + ": " + span + "; rows: " +
			(rows.length > 1 ? ylabel + " " + rows[0] + " (top) to " + rows[rows.length - 1] : ylabel + " " + rows[0]) +
			"; darker: more " + (unit || "bytes") + " (log scale, most " + (unit ? D.group(max) + " " + unit : D.bytes(max)) + " in one cell)"));
		xl.setAttribute("data-xlabel", xlabel);
		var w = step || (x1 - x0) / Math.max(1, ncols);
		if (numeric) {
			c.setAttribute("data-x0", String(x0));
			c.setAttribute("data-w", String(w));
		}
		if (numeric)
			c.zoom = function (a, b) {
				var k0 = 0, k1 = Math.max(0, ncols - 1);
				if (a !== null) {
					k0 = Math.min(k1, Math.max(0, Math.floor((a - x0) / w)));
					k1 = Math.max(k0, Math.min(k1, Math.ceil((b - x0) / w) - 1));
				}
				draw(k0, k1);
			};
		D.register({ title: title, xlabel: xlabel, ylabel: ylabel, canvas: c, plot: [0, 0, c.width, c.height], u: null });
		return c;
	};
	window.iostrataDraw = D;
})();
