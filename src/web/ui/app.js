/* SPDX-License-Identifier: MIT */
/*
 * The web UI of `iostrata serve` (docs/WEB.md): a page of three views over the JSON API
 * (docs/API.md), chosen by the URL's fragment: the jobs list (#/, live from the event stream),
 * one job's application view (#/job/ID) and the system view for admins (#/system). It draws with
 * charts.js (shared with the HTML report) and uPlot, both served by the same server.
 *
 * Access: a bearer token kept in sessionStorage and sent on every request, or none on loopback
 * (the server's loopback user); no cookie. The event stream is read with fetch() and a stream
 * reader rather than EventSource, which cannot send the Authorization header.
 *
 * Every figure shown from the API carries data-src (the API URL it came from) and data-fig (its
 * path in that answer) with data-value (the value), so a test can compare the page with the API.
 * Rates over time are the API's counts divided by the interval's length: charts, not figures.
 * Text from the store (paths, commands, job names) is only ever set with textContent.
 */
(function () {
	"use strict";
	var D = window.iostrataDraw, el = D.el, add = D.add, bytes = D.bytes, secs = D.secs, group = D.group;
	var app = document.getElementById("app");
	var TOKEN_KEY = "iostrata.token";
	/* user → system call → block: the order of the stack, top first */
	var LAYER_ORDER = ["mpiio", "stdio", "posix", "mount", "syscall", "pagecache", "fs", "block"];
	var who = null, view = { name: "", id: null, gen: 0 }, refreshTimer = null;
	window.iostrataUI = { timeCharts: [], view: view };

	/* ---- the API ---- */
	function token() { return sessionStorage.getItem(TOKEN_KEY); }
	function headers() {
		var t = token();
		return t ? { Authorization: "Bearer " + t } : {};
	}
	/* GET path: {status, body} (body null when it is not JSON); a 401 asks for a token */
	function api(path) {
		return fetch(path, { headers: headers(), cache: "no-store", credentials: "omit" }).then(function (r) {
			return r.json().then(function (b) { return { status: r.status, body: b }; },
				function () { return { status: r.status, body: null }; });
		}).then(function (r) {
			if (r.status === 401) {
				login(r.body && r.body.error);
				throw new Error("401");
			}
			return r;
		});
	}
	/* a figure of the API answer src at path */
	function fig(src, path, value, text) {
		var e = D.fig(path, value, text);
		e.setAttribute("data-src", src);
		return e;
	}
	function orderLayers(names) {
		return names.slice().sort(function (a, b) {
			var i = LAYER_ORDER.indexOf(a), j = LAYER_ORDER.indexOf(b);
			return (i < 0 ? 99 : i) - (j < 0 ? 99 : j) || (a < b ? -1 : a > b ? 1 : 0);
		});
	}
	/* The layer a heatmap or a per-node total shows: POSIX, which every captured program has
	 * (stdio's calls reach it too), else the topmost there is. */
	function heatLayer(layers) { return layers.indexOf("posix") >= 0 ? "posix" : layers[0]; }
	function when(ms) { return ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : ""; }
	function errorBox(parent, status, text) {
		var b = add(parent, el("div", "error-box", text));
		b.setAttribute("data-error", String(status));
		return b;
	}
	function section(parent, title) {
		var s = add(parent, el("section"));
		add(s, el("h2", null, title));
		return s;
	}
	function clear() {
		if (refreshTimer) clearTimeout(refreshTimer);
		refreshTimer = null;
		app.textContent = "";
		forgetCharts();
		document.body.removeAttribute("data-rendered");
		view.gen++;
	}
	/* the charts drawn so far leave the registry (a view, or a view's part drawn again) */
	function forgetCharts() {
		window.iostrataCharts.length = 0;
		window.iostrataUI.timeCharts = [];
		window.iostrataUI.heatmap = null;
	}
	function rendered() { document.body.setAttribute("data-rendered", view.name); }

	/* ---- access ---- */
	function login(message) {
		clear();
		view.name = "login";
		stopEvents();
		var f = add(app, el("form", "login"));
		f.id = "login";
		add(f, el("h1", null, "A token, please"));
		add(f, el("p", "note", (message ? message + ". " : "") + "The server asks for a bearer token (a line of its --tokens file). " +
			"It is kept in this tab's session storage only and sent as Authorization: Bearer."));
		var i = add(f, el("input"));
		i.type = "password";
		i.name = "token";
		i.id = "token";
		i.autocomplete = "off";
		i.size = 48;
		var b = add(f, el("button", null, "Use this token"));
		b.type = "submit";
		f.addEventListener("submit", function (e) {
			e.preventDefault();
			if (i.value) sessionStorage.setItem(TOKEN_KEY, i.value.trim());
			boot();
		});
		rendered();
	}
	document.getElementById("forget").addEventListener("click", function () {
		sessionStorage.removeItem(TOKEN_KEY);
		boot();
	});

	/* ---- live: the event stream, parsed by hand ---- */
	var ev = { ctl: null, backoff: 1000, timer: null };
	function setLive(on) {
		var l = document.getElementById("live");
		l.textContent = on ? "live" : "offline";
		l.className = on ? "live on" : "live";
	}
	function stopEvents() {
		if (ev.ctl) ev.ctl.abort();
		if (ev.timer) clearTimeout(ev.timer);
		ev.ctl = null;
		ev.timer = null;
		setLive(false);
	}
	function startEvents() {
		stopEvents();
		var ctl = new AbortController();
		ev.ctl = ctl;
		fetch("/api/v1/events", { headers: headers(), cache: "no-store", credentials: "omit", signal: ctl.signal }).then(function (r) {
			if (!r.ok || !r.body) throw new Error("events: " + r.status);
			setLive(true);
			ev.backoff = 1000;
			var rd = r.body.getReader(), dec = new TextDecoder(), buf = "";
			function pump() {
				return rd.read().then(function (x) {
					if (x.done) throw new Error("events: the stream ended");
					buf += dec.decode(x.value, { stream: true });
					var m;
					while ((m = /\r?\n\r?\n/.exec(buf))) {
						sseBlock(buf.slice(0, m.index));
						buf = buf.slice(m.index + m[0].length);
					}
					return pump();
				});
			}
			return pump();
		}).catch(function () {
			if (ctl.signal.aborted) return;
			setLive(false);
			/* back off: 1, 2, 4 ... 30 s between attempts */
			ev.timer = setTimeout(startEvents, ev.backoff);
			ev.backoff = Math.min(30000, ev.backoff * 2);
		});
	}
	function sseBlock(block) {
		var type = "message", data = [];
		block.split(/\r?\n/).forEach(function (line) {
			if (!line || line[0] === ":") return; /* a comment: the heartbeat */
			var k = line.indexOf(":"), f = k < 0 ? line : line.slice(0, k), v = k < 0 ? "" : line.slice(k + 1);
			if (v[0] === " ") v = v.slice(1);
			if (f === "event") type = v;
			else if (f === "data") data.push(v);
		});
		if (type !== "job" || !data.length) return;
		var j;
		try { j = JSON.parse(data.join("\n")); } catch (e) { return; }
		onJobEvent(j);
	}
	/* A job appeared or changed: the list reloads its page (its filters and order are the
	 * API's) once the burst of events is over; the job's own view reloads when it ends (its
	 * report comes then); the system view, which reads every node's series, at most every 5 s. */
	var lastSystem = 0;
	function onJobEvent(j) {
		if (view.name === "jobs" || (view.name === "job" && String(j.id) === view.id && j.state === "ended")) {
			if (refreshTimer) clearTimeout(refreshTimer);
			refreshTimer = setTimeout(function () { refreshTimer = null; if (view.refresh) view.refresh(); }, 150);
		} else if (view.name === "system" && !refreshTimer) {
			refreshTimer = setTimeout(function () {
				refreshTimer = null;
				lastSystem = Date.now();
				if (view.name === "system" && view.refresh) view.refresh();
			}, Math.max(150, lastSystem + 5000 - Date.now()));
		}
	}

	/* ---- routing ---- */
	function parseHash() {
		var h = location.hash.replace(/^#/, "") || "/";
		var q = h.indexOf("?"), path = q < 0 ? h : h.slice(0, q), params = {};
		if (q >= 0)
			new URLSearchParams(h.slice(q + 1)).forEach(function (v, k) { params[k] = v; });
		return { path: path, params: params };
	}
	function route() {
		if (!who) return;
		var h = parseHash(), m;
		view.refresh = null;
		if ((m = /^\/job\/([^/]+)$/.exec(h.path))) return viewJob(m[1]);
		if (h.path === "/system") return viewSystem(h.params);
		return viewJobs(h.params);
	}
	window.addEventListener("hashchange", route);

	function boot() {
		api("/api/v1/whoami").then(function (r) {
			if (r.status !== 200) throw new Error("whoami: " + r.status);
			who = r.body;
			var w = document.getElementById("who");
			w.textContent = "";
			add(w, el("span", null, (who.admin ? "admin " : "user ")));
			add(w, fig("/api/v1/whoami", "user", who.user, who.user));
			document.getElementById("forget").hidden = !token();
			document.getElementById("nav-system").hidden = !who.admin;
			startEvents();
			route();
		}).catch(function (e) {
			if (String(e.message) !== "401") { clear(); errorBox(app, 0, "The server did not answer: " + e.message); }
		});
	}

	/* ---- the jobs list ---- */
	var FILTERS = [
		["app", "application (command name or path)", "text"],
		["user", "user", "text"],
		["state", "state", ["", "running", "ended"]],
		["since", "started since (2h, 3d, YYYY-MM-DD, @EPOCH)", "text"],
		["until", "started before", "text"],
		["limit", "per page", ["25", "50", "100", "500"]]
	];
	function viewJobs(params) {
		clear();
		view.name = "jobs";
		view.id = null;
		var gen = view.gen;
		add(app, el("h1", null, "Jobs"));
		var form = add(app, el("form", "filters"));
		form.id = "filters";
		FILTERS.forEach(function (f) {
			var l = add(form, el("label", null, f[1]));
			var i;
			if (typeof f[2] === "string") {
				i = add(l, el("input"));
				i.type = "search";
				i.value = params[f[0]] || "";
			} else {
				i = add(l, el("select"));
				f[2].forEach(function (o) { var op = add(i, el("option", null, o || "any")); op.value = o; });
				i.value = params[f[0]] || (f[0] === "limit" ? "25" : "");
			}
			i.name = f[0];
		});
		add(form, el("button", null, "Search")).type = "submit";
		form.addEventListener("submit", function (e) {
			e.preventDefault();
			var q = new URLSearchParams();
			FILTERS.forEach(function (f) { var v = form.elements[f[0]].value.trim(); if (v) q.set(f[0], v); });
			location.hash = "#/?" + q.toString();
		});
		var status = add(app, el("div", "note"));
		var box = add(app, el("div"));
		var pager = add(app, el("div", "pager"));
		var q = new URLSearchParams();
		FILTERS.forEach(function (f) { if (params[f[0]] && f[0] !== "limit") q.set(f[0], params[f[0]]); });
		var limit = Math.min(1000, Math.max(1, parseInt(params.limit || "25", 10) || 25));
		var pageNo = Math.max(0, parseInt(params.page || "0", 10) || 0);
		/* The API lists oldest first; the newest are what one looks for (and where a new job
		 * appears): ask for the total, then for the page counted from the end, shown newest first. */
		function load() {
			var head = new URLSearchParams(q);
			head.set("limit", "1");
			return api("/api/v1/jobs?" + head.toString()).then(function (r) {
				if (r.status !== 200) return r;
				var total = r.body.total, end = Math.max(0, total - limit * pageNo);
				var pq = new URLSearchParams(q);
				pq.set("limit", String(Math.max(1, Math.min(limit, end))));
				if (end > limit) pq.set("offset", String(end - limit));
				var src = "/api/v1/jobs?" + pq.toString();
				return api(src).then(function (x) { x.src = src; return x; });
			}).then(function (r) {
				if (gen !== view.gen) return;
				box.textContent = "";
				pager.textContent = "";
				if (r.status !== 200) {
					errorBox(box, r.status, "The jobs could not be listed: " + (r.body && r.body.error || r.status));
					rendered();
					return;
				}
				var L = r.body, src = r.src;
				status.textContent = "";
				add(status, fig(src, "total", L.total, group(L.total) + " jobs"));
				status.appendChild(document.createTextNode(L.jobs.length ? "; shown, newest first: the " +
					(L.total - L.offset - L.jobs.length + 1) + (L.jobs.length > 1 ? " to " + (L.total - L.offset) : "") + " newest" : ""));
				var tb = D.table(box, ["id", "job", "user", "host", "command", "state", "started", "ended", "processes",
					"bytes read", "bytes written", "reads", "writes", "metadata ops"]);
				tb.parentNode.id = "jobs";
				for (var i = L.jobs.length - 1; i >= 0; i--) {
					var j = L.jobs[i], p = "jobs." + i + ".";
					var a = el("a", null, String(j.id));
					a.href = "#/job/" + j.id;
					var idf = fig(src, p + "id", j.id, "");
					idf.appendChild(a);
					var st = fig(src, p + "state", j.state, j.state);
					st.className += " state-" + j.state;
					var tr = D.row(tb, [idf, fig(src, p + "job", j.job, j.job), fig(src, p + "user", j.user, j.user),
						fig(src, p + "host", j.host, j.host), fig(src, p + "exe", j.exe, j.exe.replace(/^.*\//, "")), st,
						fig(src, p + "start_ms", j.start_ms, when(j.start_ms)),
						j.end_ms ? fig(src, p + "end_ms", j.end_ms, when(j.end_ms)) : "",
						fig(src, p + "processes", j.processes),
						fig(src, p + "bytes_read", j.bytes_read, bytes(j.bytes_read)),
						fig(src, p + "bytes_written", j.bytes_written, bytes(j.bytes_written)),
						fig(src, p + "reads", j.reads), fig(src, p + "writes", j.writes), fig(src, p + "meta_ops", j.meta_ops)]);
					tr.className = "job";
					tr.setAttribute("data-job-id", String(j.id));
					tr.setAttribute("data-job", j.job);
					tr.setAttribute("data-state", j.state);
				}
				if (!L.jobs.length) add(box, el("p", "note", "No job matches."));
				function page(label, n, enabled) {
					var b = add(pager, el("button", null, label));
					b.type = "button";
					b.disabled = !enabled;
					b.addEventListener("click", function () {
						var h = parseHash().params;
						if (n) h.page = String(n); else delete h.page;
						location.hash = "#/?" + new URLSearchParams(h).toString();
					});
				}
				page("← newer", pageNo - 1, pageNo > 0);
				page("older →", pageNo + 1, L.offset > 0);
				rendered();
			}).catch(function () {});
		}
		view.refresh = load;
		load();
	}

	/* ---- one job: the application view ---- */
	function viewJob(id) {
		clear();
		view.name = "job";
		view.id = id;
		/* the report's summary: all the view draws, without the per-file and per-process arrays
		 * (nearly all of a big job's report) */
		var gen = view.gen, src = "/api/v1/jobs/" + encodeURIComponent(id) + "?report=summary";
		view.refresh = function () { if (view.name === "job" && view.id === id) viewJob(id); };
		api(src).then(function (r) {
			if (gen !== view.gen) return;
			if (r.status !== 200) {
				add(app, el("h1", null, "Job " + id));
				errorBox(app, r.status, r.status === 404 ? "Not found: there is no job " + id + " you may see (" +
					(r.body && r.body.error || "404") + ")." : "The job could not be read: " + (r.body && r.body.error || r.status));
				rendered();
				return;
			}
			drawJob(src, r.body, gen);
		}).catch(function () {});
	}

	function drawJob(src, B, gen) {
		var J = B.job, R = B.report;
		var h = add(app, el("h1", null, "Job "));
		h.appendChild(fig(src, "job.job", J.job, J.job));
		var sum = section(app, "Job");
		var tb = D.table(sum, ["", ""]);
		D.row(tb, ["id", fig(src, "job.id", J.id)]);
		D.row(tb, ["user", fig(src, "job.user", J.user, J.user)]);
		D.row(tb, ["host", fig(src, "job.host", J.host, J.host)]);
		D.row(tb, ["state", fig(src, "job.state", J.state, J.state)]);
		D.row(tb, ["command", fig(src, "job.exe", J.exe, J.exe)]);
		D.row(tb, ["started", fig(src, "job.start_ms", J.start_ms, when(J.start_ms))]);
		if (J.end_ms) D.row(tb, ["ended", fig(src, "job.end_ms", J.end_ms, when(J.end_ms))]);
		D.row(tb, ["processes", fig(src, "job.processes", J.processes)]);
		D.row(tb, ["bytes read", fig(src, "job.bytes_read", J.bytes_read, bytes(J.bytes_read))]);
		D.row(tb, ["bytes written", fig(src, "job.bytes_written", J.bytes_written, bytes(J.bytes_written))]);
		if (R) {
			D.row(tb, ["wall time", fig(src, "report.job.wall_seconds", R.job.wall_seconds, secs(R.job.wall_seconds))]);
			D.row(tb, ["ranks", fig(src, "report.job.nranks", R.job.nranks)]);
			D.row(tb, ["I/O mode", fig(src, "report.job.io_mode", R.job.io_mode, R.job.io_mode)]);
			D.row(tb, ["findings", fig(src, "report.findings.length", R.findings.length)]);
		} else {
			add(sum, el("p", "note", "The job runs: its report (layers, files, findings) comes when it ends; this view reloads then."));
		}
		/* the time axis: seconds since the job's first process started (the report's anchor, which
		 * findings' times count from; the job row's start without a report) */
		var t0ms = R ? R.job.start_wall_ns / 1e6 : J.start_ms;
		var endms = J.end_ms || Date.now();
		/* up to 600 points; whole minutes (the store's roll-ups, read at a few rows a minute) once
		 * the job spans 100 minutes or more: 100 points at least */
		var span = endms - J.start_ms, res = 1000 * Math.max(1, Math.ceil(span / 1000 / 600));
		if (res > 60000 || span >= 100 * 60000) res = 60000 * Math.ceil(res / 60000);
		var over = section(app, "Over time");
		over.id = "over-time";
		var note = add(over, el("p", "note", "Per " + secs(res / 1000) + " interval of the daemon's statistics; x: seconds since the job started."));
		var zoomBar = add(over, el("div", "pager"));
		/* one series, by rank: the layers' are its sums over the ranks (the same rows) */
		var jsrc = "/api/v1/jobs/" + encodeURIComponent(J.id), rankSrc = jsrc + "/series?by=rank&resolution=" + res;
		var findings = R ? R.findings : [];
		/* the time ranges marked on the charts: the report's findings ("f" and their index) and
		 * the diagnosis' anomalies ("a" and theirs), each with the range its zoom shows */
		var marks = [];
		findings.forEach(function (f, i) {
			if (f.time) marks.push({ x0: f.time.start_ns / 1e9, x1: f.time.end_ns / 1e9, key: "f" + i, label: f.id, active: false });
		});
		var diagSrc = jsrc + "/diagnosis";
		var reset = add(zoomBar, el("button", null, "Whole job"));
		reset.type = "button";
		reset.id = "zoom-reset";
		var zoomed = add(zoomBar, el("span", "note"));
		zoomed.id = "zoom-range";
		Promise.all([api(rankSrc), api(diagSrc)]).then(function (rs) {
			if (gen !== view.gen) return;
			var K = rs[0].body, G = rs[1].status === 200 ? rs[1].body : null;
			if (rs[0].status !== 200) {
				errorBox(over, rs[0].status, "The series could not be read.");
				return;
			}
			if (G)
				G.findings.forEach(function (f, i) {
					marks.push({ x0: (f.start_ms - t0ms) / 1000, x1: (f.end_ms - t0ms) / 1000, key: "a" + i, label: f.kind, active: false });
				});
			drawSeries(over, K.points, K.points, t0ms, res, marks, R ? R.job.wall_seconds : (endms - t0ms) / 1000);
			reset.addEventListener("click", function () { zoom(null); });
			drawAnomalies(diagSrc, G, rs[1].status, t0ms);
			if (R) drawReport(src, R, marks);
			rendered();
		}).catch(function (e) {
			/* a report this UI cannot draw (one without a member it needs) is said, not a view
			 * that never finishes */
			if (gen !== view.gen) return;
			errorBox(over, 0, "The job could not be drawn: " + (e && e.message ? e.message : e));
			rendered();
		});

		/* zoom: every time chart and the heatmap to a mark's range (null: the whole job) */
		function zoom(key) {
			var charts = window.iostrataUI.timeCharts, m = null;
			marks.forEach(function (x) { x.active = x.key === key; if (x.active) m = x; });
			[].forEach.call(document.querySelectorAll(".finding.active"), function (e) { e.classList.remove("active"); });
			var heat = window.iostrataUI.heatmap;
			if (!m) {
				charts.forEach(function (u) { u.setScale("x", { min: u.data[0][0], max: u.data[0][u.data[0].length - 1] }); });
				if (heat) heat.zoom(null);
				zoomed.textContent = "";
				return;
			}
			var a = m.x0, b = m.x1;
			/* a mark at one instant gets a millisecond around it: a scale needs a width */
			if (b <= a) { a -= 0.0005; b += 0.0005; }
			charts.forEach(function (u) { u.setScale("x", { min: a, max: b }); });
			if (heat) heat.zoom(a, b); /* its columns that overlap the range */
			zoomed.textContent = "zoomed to " + m.label + ": " + secs(a) + " to " + secs(b);
			zoomed.setAttribute("data-key", key);
			var d = document.querySelector('.finding[data-key="' + key + '"]');
			if (d) d.classList.add("active");
			over.scrollIntoView();
		}
		view.zoom = zoom;
	}

	/* The layer and rank series: bandwidth, IOPS and metadata rate per layer, and the
	 * rank × time heatmap. Buckets without a point are zero. */
	function drawSeries(parent, lpts, kpts, t0ms, res, marks, wall) {
		if (!lpts.length) {
			add(parent, el("p", "note", "No interval statistics for this job in the store (the daemon did not see it run)."));
			return;
		}
		var tmin = Infinity, tmax = -Infinity;
		lpts.concat(kpts).forEach(function (p) { tmin = Math.min(tmin, p.t_ms); tmax = Math.max(tmax, p.t_ms); });
		var n = Math.round((tmax - tmin) / res) + 1, xs = [], dt = res / 1000;
		for (var b = 0; b < n; b++) xs.push((tmin + b * res - t0ms) / 1000);
		var layers = orderLayers(lpts.map(function (p) { return p.layer; }).filter(function (l, i, a) { return a.indexOf(l) === i; }));
		function perLayer(fn) {
			return layers.map(function (l) {
				var v = xs.map(function () { return 0; });
				lpts.forEach(function (p) { if (p.layer === l) v[Math.round((p.t_ms - tmin) / res)] += fn(p); });
				return v.map(function (x) { return x / dt; });
			});
		}
		var rate = function (u, v) { return v.map(function (x) { return bytes(x) + "/s"; }); };
		var opt = function (o) { o.marks = marks; return o; };
		/* the axis spans the whole job, from its start to its end or the last interval's: a point
		 * without values at either end where the intervals do not reach */
		var lo = Math.min(0, xs[0]), hi = Math.max(wall, xs[n - 1] + dt), pre = lo < xs[0], post = hi > xs[n - 1];
		var txs = (pre ? [lo] : []).concat(xs, post ? [hi] : []);
		function perLayerT(fn) {
			return perLayer(fn).map(function (v) { return (pre ? [null] : []).concat(v, post ? [null] : []); });
		}
		var timeCharts = window.iostrataUI.timeCharts;
		timeCharts.push(D.chart(parent, "Bandwidth per layer", "time since start", "bytes/s",
			[txs].concat(perLayerT(function (p) { return p.bytes_read + p.bytes_written; })), layers, opt({ yticks: rate })));
		timeCharts.push(D.chart(parent, "IOPS per layer", "time since start", "calls/s",
			[txs].concat(perLayerT(function (p) { return p.reads + p.writes; })), layers, opt({})));
		timeCharts.push(D.chart(parent, "Metadata rate per layer", "time since start", "metadata ops/s",
			[txs].concat(perLayerT(function (p) { return p.meta_ops; })), layers, opt({})));
		/* rank × time: one layer, as a layer's bytes repeat further down the stack */
		var klayers = orderLayers(kpts.map(function (p) { return p.layer; }).filter(function (l, i, a) { return a.indexOf(l) === i; }));
		if (!klayers.length) return;
		var kl = heatLayer(klayers);
		var ranks = kpts.filter(function (p) { return p.layer === kl; }).map(function (p) { return p.rank; })
			.filter(function (r, i, a) { return a.indexOf(r) === i; }).sort(function (a, b) { return a - b; });
		var cells = ranks.map(function () { return xs.map(function () { return 0; }); });
		kpts.forEach(function (p) {
			if (p.layer === kl) cells[ranks.indexOf(p.rank)][Math.round((p.t_ms - tmin) / res)] += p.bytes_read + p.bytes_written;
		});
		window.iostrataUI.heatmap = D.heatmap(parent, "Bytes per rank over time (" + kl + ")", "time since start", "rank",
			ranks.map(function (r) { return r < 0 ? "none (not MPI)" : r; }), n, function (r, c) { return cells[r][c]; },
			xs[0], xs[n - 1] + dt, null, dt);
	}

	/* The diagnosis: the job's I/O phases and what is abnormal in them, each with its zoom. */
	function drawAnomalies(dsrc, G, status, t0ms) {
		var sec = section(app, "Anomalies (diagnosis)");
		sec.id = "anomalies";
		if (!G) {
			add(sec, el("p", "note", "No diagnosis (the API answered " + status + ")."));
			return;
		}
		var p0 = add(sec, el("p", "note"));
		p0.append(fig(dsrc, "phases.length", G.phases.length, group(G.phases.length)), " I/O phases, compared with ",
			fig(dsrc, "history", G.history), " similar jobs before; ", fig(dsrc, "neighbours", G.neighbours),
			" jobs beside it (docs/DIAGNOSIS.md).");
		if (!G.findings.length) add(sec, el("p", "note", "Nothing abnormal."));
		G.findings.forEach(function (f, i) {
			var p = "findings." + i + ".";
			var d = add(sec, el("div", "finding anomaly " + (f.kind === "not_enough_data" ? "info" : "warning")));
			d.setAttribute("data-anomaly", f.kind);
			d.setAttribute("data-key", "a" + i);
			var h = add(d, el("div"));
			add(h, el("strong")).appendChild(fig(dsrc, p + "kind", f.kind, f.kind));
			h.append(" (phase ", fig(dsrc, p + "phase", f.phase), ") ");
			var b = add(h, el("button", "zoom", "zoom to " + secs((f.start_ms - t0ms) / 1000) + " – " + secs((f.end_ms - t0ms) / 1000)));
			b.type = "button";
			b.setAttribute("data-zoom-anomaly", String(i));
			b.addEventListener("click", function () { view.zoom("a" + i); });
			add(h, el("span", "hidden-figs")).append(fig(dsrc, p + "start_ms", f.start_ms, ""), fig(dsrc, p + "end_ms", f.end_ms, ""));
			var t = add(d, el("div", "note"));
			if (f.kind === "not_enough_data")
				t.append("had ", fig(dsrc, p + "value", f.value), ", needs ", fig(dsrc, p + "expected", f.expected));
			else
				t.append("bandwidth ", fig(dsrc, p + "value", f.value, bytes(f.value) + "/s"), " against ",
					fig(dsrc, p + "expected", f.expected, bytes(f.expected) + "/s"), " expected (",
					fig(dsrc, p + "slower", f.slower, Math.round(f.slower * 100) + " % slower"), ")" +
					(f.resource ? "; shared: " + f.resource : "") + (f.node ? "; node " + f.node : "") +
					(f.jobs && f.jobs.length ? "; beside " + f.jobs.join(", ") : ""));
		});
	}

	function drawReport(src, R, marks) {
		var layers = orderLayers(Object.keys(R.layers));
		/* totals per layer, top of the stack first */
		var ls = section(app, "Totals per layer");
		var tb = D.table(ls, ["layer", "files", "reads", "writes", "bytes read", "bytes written", "metadata ops", "bandwidth (I/O time)", "IOPS"]);
		layers.forEach(function (l) {
			var L = R.layers[l], p = "report.layers." + l + ".";
			D.row(tb, [l, fig(src, p + "files", L.files), fig(src, p + "reads", L.reads), fig(src, p + "writes", L.writes),
				fig(src, p + "bytes_read", L.bytes_read, bytes(L.bytes_read)),
				fig(src, p + "bytes_written", L.bytes_written, bytes(L.bytes_written)),
				fig(src, p + "meta_ops", L.meta_ops),
				fig(src, p + "bandwidth_io", L.bandwidth_io, bytes(L.bandwidth_io) + "/s"),
				fig(src, p + "iops", L.iops, L.iops.toFixed(1))]);
		});

		/* request sizes */
		var ss = section(app, "Request sizes");
		orderLayers(Object.keys(R.sizes).filter(function (k) { return k !== "buckets"; })).forEach(function (l) {
			var H = R.sizes[l];
			if (!H.read.some(Boolean) && !H.write.some(Boolean)) return;
			var bx = R.sizes.buckets.map(function (x, i) { return i; });
			D.chart(ss, "Request sizes: " + l, "request size", "calls", [bx, H.read, H.write], ["read", "write"],
				Object.assign({ bars: true }, D.catTicks(R.sizes.buckets)));
		});

		/* files: each file's layers side by side */
		var fs = section(app, "Files through the layers");
		if (R.kernel && R.kernel.files && R.kernel.files.length) {
			tb = D.table(fs, ["file", "user read", "user written", "syscall read", "syscall written", "block read", "block written"]);
			tb.parentNode.id = "kernel-files";
			R.kernel.files.forEach(function (x, i) {
				var p = "report.kernel.files." + i + ".";
				D.row(tb, [fig(src, p + "path", x.path, x.path),
					fig(src, p + "user.bytes_read", x.user.bytes_read, bytes(x.user.bytes_read)),
					fig(src, p + "user.bytes_written", x.user.bytes_written, bytes(x.user.bytes_written)),
					fig(src, p + "syscall.bytes_read", x.syscall.bytes_read, bytes(x.syscall.bytes_read)),
					fig(src, p + "syscall.bytes_written", x.syscall.bytes_written, bytes(x.syscall.bytes_written)),
					fig(src, p + "block.bytes_read", x.block.bytes_read, bytes(x.block.bytes_read)),
					fig(src, p + "block.bytes_written", x.block.bytes_written, bytes(x.block.bytes_written))]);
			});
		}
		var paths = [], byPath = {}, fl = [];
		R.top_files_by_bytes.forEach(function (x, i) {
			if (!byPath[x.path]) { byPath[x.path] = {}; paths.push(x.path); }
			byPath[x.path][x.layer] = i;
			if (fl.indexOf(x.layer) < 0) fl.push(x.layer);
		});
		fl = orderLayers(fl);
		var head = ["file (top " + R.top_files_by_bytes.length + " by bytes)"];
		fl.forEach(function (l) { head.push(l + " read", l + " written", l + " calls"); });
		tb = D.table(fs, head);
		tb.parentNode.id = "files";
		paths.forEach(function (path) {
			var cells = [path];
			fl.forEach(function (l) {
				var i = byPath[path][l];
				if (i === undefined) { cells.push("", "", ""); return; }
				var x = R.top_files_by_bytes[i], p = "report.top_files_by_bytes." + i + ".";
				cells.push(fig(src, p + "bytes_read", x.bytes_read, bytes(x.bytes_read)),
					fig(src, p + "bytes_written", x.bytes_written, bytes(x.bytes_written)),
					group(x.reads + x.writes));
			});
			D.row(tb, cells);
		});

		/* ranks */
		var rs = section(app, "Per rank");
		tb = D.table(rs, ["", ""]);
		D.row(tb, ["imbalance of bytes (max / mean)", fig(src, "report.imbalance.bytes", R.imbalance.bytes, R.imbalance.bytes.toFixed(2))]);
		D.row(tb, ["imbalance of I/O time (max / mean)", fig(src, "report.imbalance.time", R.imbalance.time, R.imbalance.time.toFixed(2))]);
		D.row(tb, ["ranks with I/O", fig(src, "report.imbalance.ranks_with_io", R.imbalance.ranks_with_io)]);
		if (R.ranks.length) {
			var labels = R.ranks.map(function (k) { return k.label; });
			D.chart(rs, "Bytes per rank", "rank", "bytes", [R.ranks.map(function (k, i) { return i; }),
				R.ranks.map(function (k) { return k.bytes_read; }), R.ranks.map(function (k) { return k.bytes_written; })],
			["read", "written"], Object.assign({ bars: true, yticks: D.byteTicks }, D.catTicks(labels)));
		}

		/* findings, each with its zoom when it has a time */
		var fd = section(app, "Findings (" + R.findings.length + ")");
		fd.id = "findings";
		if (!R.findings.length) add(fd, el("p", "note", "No finding."));
		R.findings.forEach(function (x, i) {
			var p = "report.findings." + i + ".";
			var d = add(fd, el("div", "finding " + x.severity));
			d.setAttribute("data-finding", x.id);
			d.setAttribute("data-index", String(i));
			d.setAttribute("data-key", "f" + i);
			var h = add(d, el("div"));
			h.appendChild(fig(src, p + "severity", x.severity, x.severity));
			h.appendChild(document.createTextNode(": "));
			add(h, el("strong")).appendChild(fig(src, p + "id", x.id, x.id));
			if (x.layer) add(h, el("span", null, " (" + x.layer + (x.path ? ", " + x.path : "") + (x.rank !== null ? ", rank " + x.rank : "") + ")"));
			if (x.time) {
				var b = add(h, el("button", "zoom", "zoom to " + secs(x.time.start_ns / 1e9) + " – " + secs(x.time.end_ns / 1e9)));
				b.type = "button";
				b.setAttribute("data-zoom", String(i));
				b.addEventListener("click", function () { view.zoom("f" + i); });
				add(h, el("span", "hidden-figs")).append(fig(src, p + "time.start_ns", x.time.start_ns, ""), fig(src, p + "time.end_ns", x.time.end_ns, ""));
			}
			add(d, el("div", null, x.text));
			add(d, el("div", "rec", "Recommendation: " + x.recommendation));
			var figs = add(d, el("div", "note"));
			x.figures.forEach(function (g, k) {
				if (k) figs.appendChild(document.createTextNode("; "));
				figs.appendChild(document.createTextNode(g.name + " = "));
				figs.appendChild(fig(src, p + "figures." + k + ".value", g.value,
					g.unit === "bytes" ? bytes(g.value) : g.unit === "ns" ? secs(g.value / 1e9) : group(g.value)));
			});
		});
		if (R.warnings.length) {
			var ul = add(section(app, "Warnings"), el("ul"));
			R.warnings.forEach(function (t) { add(ul, el("li", null, t)); });
		}
	}

	/* ---- the system view (admins) ---- */
	var SPANS = { "15m": 5000, "1h": 10000, "6h": 60000, "24h": 300000, "7d": 1800000 };
	function viewSystem(params) {
		clear();
		view.name = "system";
		view.id = null;
		var gen = view.gen;
		add(app, el("h1", null, "System"));
		if (!who.admin) {
			errorBox(app, 403, "The system view is for admins: " + who.user + " is not one. Your own jobs are in the jobs list.");
			rendered();
			return;
		}
		var since = SPANS[params.since] ? params.since : "1h", res = SPANS[since];
		var form = add(app, el("form", "filters"));
		var l = add(form, el("label", null, "period"));
		var sel = add(l, el("select"));
		Object.keys(SPANS).forEach(function (k) { add(sel, el("option", null, k)).value = k; });
		sel.value = since;
		sel.name = "since";
		sel.addEventListener("change", function () { location.hash = "#/system?since=" + sel.value; });
		var q = "since=" + since;
		var nodesSrc = "/api/v1/nodes?" + q, runSrc = "/api/v1/jobs?state=running&limit=1000",
			alertSrc = "/api/v1/alerts?" + q, devSrc = "/api/v1/devices?" + q, mntSrc = "/api/v1/mounts?" + q;
		var body = add(app, el("div"));
		function load() {
			Promise.all([api(nodesSrc), api(runSrc), api(alertSrc), api(devSrc), api(mntSrc)]).then(function (rs) {
				if (gen !== view.gen) return;
				var bad = rs.filter(function (r) { return r.status !== 200; });
				if (bad.length) {
					body.textContent = "";
					forgetCharts();
					errorBox(body, bad[0].status, "The system figures could not be read: " + (bad[0].body && bad[0].body.error));
					rendered();
					return;
				}
				var hosts = rs[0].body.nodes.map(function (n) { return n.host; });
				return Promise.all(hosts.map(function (h) {
					return api("/api/v1/nodes/" + encodeURIComponent(h) + "/series?" + q + "&resolution=" + res);
				})).then(function (ns) {
					if (gen !== view.gen) return;
					body.textContent = "";
					forgetCharts(); /* (every chart of the view is in body: all drawn again) */
					drawSystem(body, rs, hosts, ns.map(function (r) { return r.body.points; }), res,
						{ nodes: nodesSrc, run: runSrc, alerts: alertSrc, dev: devSrc, mnt: mntSrc });
					rendered();
				});
			}).catch(function () {});
		}
		view.refresh = load;
		load();
	}

	function drawSystem(parent, rs, hosts, series, res, srcs) {
		var now = Date.now(), dt = res / 1000;
		/* nodes: aggregate bandwidth per layer, bytes per node, node × time */
		var ns = section(parent, "Nodes");
		var tb = D.table(ns, ["host", "first second", "last second"]);
		rs[0].body.nodes.forEach(function (n, i) {
			var p = "nodes." + i + ".";
			D.row(tb, [fig(srcs.nodes, p + "host", n.host, n.host), fig(srcs.nodes, p + "first_ms", n.first_ms, when(n.first_ms)),
				fig(srcs.nodes, p + "last_ms", n.last_ms, when(n.last_ms))]);
		});
		var all = [];
		series.forEach(function (pts, h) { pts.forEach(function (p) { all.push({ h: h, p: p }); }); });
		if (all.length) {
			var tmin = Infinity, tmax = -Infinity;
			all.forEach(function (x) { tmin = Math.min(tmin, x.p.t_ms); tmax = Math.max(tmax, x.p.t_ms); });
			var n = Math.round((tmax - tmin) / res) + 1, xs = [];
			for (var b = 0; b < n; b++) xs.push((tmin + b * res - now) / 1000);
			var layers = orderLayers(all.map(function (x) { return x.p.layer; }).filter(function (l, i, a) { return a.indexOf(l) === i; }));
			var bw = layers.map(function (l) {
				var v = xs.map(function () { return 0; });
				all.forEach(function (x) { if (x.p.layer === l) v[Math.round((x.p.t_ms - tmin) / res)] += x.p.bytes_read + x.p.bytes_written; });
				return v.map(function (y) { return y / dt; });
			});
			var ago = function (u, v) { return v.map(function (x) { return x ? secs(-x) + " ago" : "now"; }); };
			window.iostrataUI.timeCharts.push(D.chart(ns, "Aggregate bandwidth per layer (all nodes)", "time", "bytes/s", [xs].concat(bw), layers,
				{ xticks: ago, yticks: function (u, v) { return v.map(function (x) { return bytes(x) + "/s"; }); } }));
			var top = heatLayer(layers);
			var per = hosts.map(function (h, k) {
				return series[k].reduce(function (s, p) { return s + (p.layer === top ? p.bytes_read + p.bytes_written : 0); }, 0);
			});
			D.chart(ns, "Bytes per node (" + top + ", load balance)", "node", "bytes", [hosts.map(function (h, i) { return i; }), per],
				["bytes"], Object.assign({ bars: true, yticks: D.byteTicks }, D.catTicks(hosts)));
			var cells = hosts.map(function () { return xs.map(function () { return 0; }); });
			all.forEach(function (x) { if (x.p.layer === top) cells[x.h][Math.round((x.p.t_ms - tmin) / res)] += x.p.bytes_read + x.p.bytes_written; });
			D.heatmap(ns, "Bytes per node over time (" + top + ")", "time", "node", hosts, n,
				function (r, c) { return cells[r][c]; }, secs(-xs[0]) + " ago to " + (xs[n - 1] + dt < 0 ? secs(-xs[n - 1] - dt) + " ago" : "now"));
		} else {
			add(ns, el("p", "note", "No node seconds in this period."));
		}

		/* devices */
		var ds = section(parent, "Devices and mounts");
		var dev = rs[3].body.devices;
		if (dev.length) {
			var names = dev.map(function (d) { return d.host + ":" + d.device; }).filter(function (x, i, a) { return a.indexOf(x) === i; });
			var t0 = Infinity, t1 = -Infinity;
			dev.forEach(function (d) { var t = Math.floor(d.t_ms / res) * res; t0 = Math.min(t0, t); t1 = Math.max(t1, t); });
			var m = Math.round((t1 - t0) / res) + 1, dx = [];
			for (var k = 0; k < m; k++) dx.push((t0 + k * res - now) / 1000);
			var ys = names.map(function () { return dx.map(function () { return 0; }); });
			dev.forEach(function (d) {
				ys[names.indexOf(d.host + ":" + d.device)][Math.round((Math.floor(d.t_ms / res) * res - t0) / res)] +=
					(d.sectors_read + d.sectors_written) * 512 / dt;
			});
			window.iostrataUI.timeCharts.push(D.chart(ds, "Bandwidth per device", "time", "bytes/s", [dx].concat(ys), names,
				{ xticks: function (u, v) { return v.map(function (x) { return x ? secs(-x) + " ago" : "now"; }); },
					yticks: function (u, v) { return v.map(function (x) { return bytes(x) + "/s"; }); } }));
		} else {
			add(ds, el("p", "note", "No device samples in this period (the daemon's device sampler)."));
		}
		var mnt = rs[4].body.mounts;
		add(ds, el("p", "note")).appendChild(fig(srcs.mnt, "mounts.length", mnt.length, group(mnt.length) + " NFS and Lustre samples in this period"));
		if (mnt.length) {
			tb = D.table(ds, ["host", "source", "instance", "metric", "value", "time"]);
			mnt.slice(-20).forEach(function (x, k) {
				var i = mnt.length - Math.min(20, mnt.length) + k, p = "mounts." + i + ".";
				D.row(tb, [fig(srcs.mnt, p + "host", x.host, x.host), x.source, x.instance, x.metric,
					fig(srcs.mnt, p + "value", x.value), when(x.t_ms)]);
			});
		}

		/* running jobs, most I/O first */
		var rj = section(parent, "Running jobs by I/O");
		rj.id = "running";
		var run = rs[1].body.jobs.map(function (j, i) { return { j: j, i: i }; });
		run.sort(function (a, b) { return (b.j.bytes_read + b.j.bytes_written) - (a.j.bytes_read + a.j.bytes_written) || a.j.id - b.j.id; });
		if (!run.length) add(rj, el("p", "note", "No job runs."));
		else {
			tb = D.table(rj, ["id", "job", "user", "host", "bytes read", "bytes written", "reads", "writes"]);
			run.forEach(function (x) {
				var j = x.j, p = "jobs." + x.i + ".", a = el("a", null, String(j.id));
				a.href = "#/job/" + j.id;
				D.row(tb, [a, fig(srcs.run, p + "job", j.job, j.job), fig(srcs.run, p + "user", j.user, j.user), j.host,
					fig(srcs.run, p + "bytes_read", j.bytes_read, bytes(j.bytes_read)),
					fig(srcs.run, p + "bytes_written", j.bytes_written, bytes(j.bytes_written)),
					fig(srcs.run, p + "reads", j.reads), fig(srcs.run, p + "writes", j.writes)]).setAttribute("data-job", j.job);
			});
		}

		/* alerts: the findings of ended jobs */
		var as = section(parent, "Alerts");
		as.id = "alerts";
		var al = rs[2].body.alerts;
		add(as, el("p", "note", "The findings of the jobs that ended in this period (interference and degraded devices show here as the API reports them)."));
		if (!al.length) add(as, el("p", "note", "No alert."));
		else {
			tb = D.table(as, ["job", "user", "host", "ended", "severity", "finding", "what"]);
			al.forEach(function (x, i) {
				var p = "alerts." + i + ".", a = el("a", null, x.job);
				a.href = "#/job/" + x.id;
				D.row(tb, [a, fig(srcs.alerts, p + "user", x.user, x.user), fig(srcs.alerts, p + "host", x.host, x.host),
					fig(srcs.alerts, p + "end_ms", x.end_ms, when(x.end_ms)),
					fig(srcs.alerts, p + "finding.severity", x.finding.severity, x.finding.severity),
					fig(srcs.alerts, p + "finding.id", x.finding.id, x.finding.id), x.finding.text]);
			});
		}

		/* anomalies: what the diagnoses of ended jobs found (interference, a degraded node, no cause) */
		var an = section(parent, "Anomalies");
		an.id = "anomalies";
		var am = rs[2].body.anomalies || [];
		add(an, el("p", "note", "Jobs slower than their application's history, and the cause each diagnosis named (docs/DIAGNOSIS.md)."));
		if (!am.length) add(an, el("p", "note", "No anomaly."));
		else {
			tb = D.table(an, ["job", "user", "host", "diagnosed", "cause", "slower", "on", "neighbours"]);
			am.forEach(function (x, i) {
				var p = "anomalies." + i + ".", a = el("a", null, x.job), f = x.finding;
				a.href = "#/job/" + x.id;
				D.row(tb, [a, fig(srcs.alerts, p + "user", x.user, x.user), fig(srcs.alerts, p + "host", x.host, x.host),
					fig(srcs.alerts, p + "diagnosed_ms", x.diagnosed_ms, when(x.diagnosed_ms)),
					fig(srcs.alerts, p + "finding.kind", f.kind, f.kind.replace("_", " ")),
					fig(srcs.alerts, p + "finding.slower", f.slower, Math.round(100 * f.slower) + " %"),
					f.node || f.resource || "", (f.jobs || []).join(", ")]);
			});
		}
	}

	boot();
})();
