/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's page script (report_html.c inlines it after uPlot and charts.js, the drawing
 * it shares with the web UI). It reads the two JSON
 * blocks the page carries (the JSON report, and the time series of a traced job or null) and draws
 * them: figures, charts, tables. It computes nothing but units for display: every figure shown is
 * one of the JSON report's, and carries it as data-fig (its JSON path) and data-value (its value)
 * so a test can compare the page with `iostrata report --json`. Text from the logs is only ever
 * set with textContent.
 */
(function () {
	"use strict";
	var R = JSON.parse(document.getElementById("iostrata-report").textContent);
	var S = JSON.parse(document.getElementById("iostrata-series").textContent);
	var main = document.getElementById("report");
	var D = window.iostrataDraw;
	var el = D.el, add = D.add, group = D.group, bytes = D.bytes, secs = D.secs, fig = D.fig;
	var table = D.table, row = D.row, byteTicks = D.byteTicks, catTicks = D.catTicks;

	function section(title) {
		var s = add(main, el("section"));
		add(s, el("h2", null, title));
		return s;
	}
	var chart = D.chart;

	var job = R.job, layers = Object.keys(R.layers);

	/* --- summary --- */
	var sum = section("Job");
	var tb = table(sum, ["", ""]);
	row(tb, ["job id", fig("job.id", job.id, job.id || "(none)")]);
	row(tb, ["command", fig("job.command", job.command, job.command)]);
	row(tb, ["started", fig("job.start_time", job.start_time, job.start_time || "unknown")]);
	row(tb, ["wall time", fig("job.wall_seconds", job.wall_seconds, secs(job.wall_seconds))]);
	row(tb, ["processes", fig("job.nprocs", job.nprocs)]);
	row(tb, ["ranks", fig("job.nranks", job.nranks)]);
	row(tb, ["I/O mode", fig("job.io_mode", job.io_mode, job.io_mode)]);
	row(tb, ["findings", fig("findings.length", R.findings.length)]);
	row(tb, ["warnings", fig("warnings.length", R.warnings.length)]);

	/* --- per layer --- */
	var ls = section("Totals per layer");
	tb = table(ls, ["layer", "files", "reads", "writes", "bytes read", "bytes written", "metadata ops", "bandwidth (I/O time)", "IOPS"]);
	layers.forEach(function (l) {
		var L = R.layers[l], p = "layers." + l + ".";
		row(tb, [l, fig(p + "files", L.files), fig(p + "reads", L.reads), fig(p + "writes", L.writes),
			fig(p + "bytes_read", L.bytes_read, bytes(L.bytes_read)),
			fig(p + "bytes_written", L.bytes_written, bytes(L.bytes_written)),
			fig(p + "meta_ops", L.meta_ops),
			fig(p + "bandwidth_io", L.bandwidth_io, bytes(L.bandwidth_io) + "/s"),
			fig(p + "iops", L.iops, L.iops.toFixed(1))]);
	});
	var xs = layers.map(function (l, i) { return i; });
	chart(ls, "Bytes per layer", "layer", "bytes",
		[xs, layers.map(function (l) { return R.layers[l].bytes_read; }), layers.map(function (l) { return R.layers[l].bytes_written; })],
		["read", "written"], Object.assign({ bars: true, yticks: byteTicks }, catTicks(layers)));

	/* --- over time (traced jobs) --- */
	if (S && S.nbuckets) {
		var ts = section("Over time");
		var w = S.bucket_ns / 1e9, tx = [];
		for (var b = 0; b < S.nbuckets; b++) tx.push(b * w);
		var bw = [tx], bwn = [], io = [tx], ion = [];
		S.layers.forEach(function (L) {
			if (L.bytes_read.some(Boolean)) { bw.push(L.bytes_read.map(function (v) { return v / w; })); bwn.push(L.layer + " read"); }
			if (L.bytes_written.some(Boolean)) { bw.push(L.bytes_written.map(function (v) { return v / w; })); bwn.push(L.layer + " write"); }
			io.push(L.reads.map(function (v, i) { return (v + L.writes[i]) / w; })); ion.push(L.layer);
		});
		add(ts, el("p", "note", "Buckets of " + secs(w) + " from the trace; a call is spread over the buckets it spans."));
		if (bwn.length)
			chart(ts, "Bandwidth per layer", "time", "bytes/s", bw, bwn, { yticks: function (u, v) { return v.map(function (x) { return bytes(x) + "/s"; }); } });
		chart(ts, "IOPS per layer", "time", "calls/s", io, ion);
		if (S.procs.length) heatmap(ts, tx, w);
	} else {
		add(section("Over time"), el("p", "note", "No trace in this job: the figures are totals. Run with `iostrata run --trace` for time charts."));
	}

	function heatmap(parent, tx, w) {
		var ranked = S.procs.some(function (p) { return p.rank >= 0; });
		var title = "Bytes per " + (R.job.nranks && ranked ? "rank" : "process") + " over time (" + S.proc_layer + ")";
		var rows = S.procs.slice().sort(function (a, b) { return a.rank - b.rank || a.pid - b.pid; });
		D.heatmap(parent, title, "time", ranked ? "rank" : "process (pid)",
			rows.map(function (p) { return p.rank >= 0 ? p.rank : p.pid; }), S.nbuckets,
			function (r, b) { return rows[r].bytes[b]; }, 0, tx.length * w);
	}

	/* --- request sizes --- */
	var ss = section("Request sizes");
	Object.keys(R.sizes).forEach(function (l) {
		if (l === "buckets") return;
		var H = R.sizes[l];
		if (!H.read.some(Boolean) && !H.write.some(Boolean)) return;
		var bx = R.sizes.buckets.map(function (x, i) { return i; });
		chart(ss, "Request sizes: " + l, "request size", "calls", [bx, H.read, H.write], ["read", "write"],
			Object.assign({ bars: true }, catTicks(R.sizes.buckets)));
	});

	/* --- ranks --- */
	var rs = section("Per " + (job.nranks > 1 && R.ranks.some(function (k) { return k.rank >= 0; }) ? "rank" : "process"));
	tb = table(rs, ["", ""]);
	row(tb, ["imbalance of bytes (max / mean)", fig("imbalance.bytes", R.imbalance.bytes, R.imbalance.bytes.toFixed(2))]);
	row(tb, ["imbalance of I/O time (max / mean)", fig("imbalance.time", R.imbalance.time, R.imbalance.time.toFixed(2))]);
	row(tb, ["with I/O", fig("imbalance.ranks_with_io", R.imbalance.ranks_with_io)]);
	if (R.ranks.length) {
		var rx = R.ranks.map(function (k, i) { return i; });
		var labels = R.ranks.map(function (k) { return k.label; });
		chart(rs, "Bytes per rank", "rank", "bytes",
			[rx, R.ranks.map(function (k) { return k.bytes_read; }), R.ranks.map(function (k) { return k.bytes_written; })],
			["read", "written"], Object.assign({ bars: true, yticks: byteTicks }, {
				xticks: function (u, vals) { return vals.map(function (v) { return labels[v] !== undefined ? labels[v] : ""; }); } }));
	}

	/* --- files --- */
	var fs = section("Files by bytes (top " + R.top_files_by_bytes.length + ")");
	var paths = [], byPath = {}, fl = [];
	R.top_files_by_bytes.forEach(function (x) {
		if (!byPath[x.path]) { byPath[x.path] = {}; paths.push(x.path); }
		byPath[x.path][x.layer] = x;
		if (fl.indexOf(x.layer) < 0) fl.push(x.layer);
	});
	var head = ["file"];
	fl.forEach(function (l) { head.push(l + " read", l + " written", l + " calls"); });
	tb = table(fs, head);
	paths.forEach(function (p) {
		var cells = [p];
		fl.forEach(function (l) {
			var x = byPath[p][l];
			if (!x) { cells.push("", "", ""); return; }
			cells.push(bytes(x.bytes_read), bytes(x.bytes_written), group(x.reads + x.writes));
		});
		row(tb, cells);
	});
	if (R.kernel && R.kernel.files.length) {
		var ks = section("Files through the stack");
		tb = table(ks, ["file", "user read", "user written", "syscall read", "syscall written", "block read", "block written"]);
		R.kernel.files.forEach(function (x) {
			row(tb, [x.path, bytes(x.user.bytes_read), bytes(x.user.bytes_written), bytes(x.syscall.bytes_read),
				bytes(x.syscall.bytes_written), bytes(x.block.bytes_read), bytes(x.block.bytes_written)]);
		});
	}

	/* --- findings --- */
	var fd = section("Findings (" + R.findings.length + ")");
	if (!R.findings.length) add(fd, el("p", "note", "No finding."));
	R.findings.forEach(function (x, i) {
		var d = add(fd, el("div", "finding " + x.severity));
		d.setAttribute("data-finding", x.id);
		var h = add(d, el("div"));
		add(h, el("strong", null, x.severity + ": " + x.id));
		if (x.layer) add(h, el("span", null, " (" + x.layer + (x.path ? ", " + x.path : "") + (x.rank !== null ? ", rank " + x.rank : "") + ")"));
		add(d, el("div", null, x.text));
		add(d, el("div", "rec", "Recommendation: " + x.recommendation));
		var figs = add(d, el("div", "note"));
		x.figures.forEach(function (g, k) {
			if (k) figs.appendChild(document.createTextNode("; "));
			figs.appendChild(document.createTextNode(g.name + " = "));
			figs.appendChild(fig("findings." + i + ".figures." + k + ".value", g.value,
				g.unit === "bytes" ? bytes(g.value) : g.unit === "ns" ? secs(g.value / 1e9) : group(g.value)));
		});
	});
	if (R.warnings.length) {
		var ws = section("Warnings");
		var ul = add(ws, el("ul"));
		R.warnings.forEach(function (t) { add(ul, el("li", null, t)); });
	}
	document.body.setAttribute("data-rendered", "1");
})();
