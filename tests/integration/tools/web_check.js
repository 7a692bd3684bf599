// SPDX-License-Identifier: MIT
// Drives the web UI of `iostrata serve` in Debian's Chromium (playwright-core, no browser
// download) and prints what web_ui.sh checks, as JSON; it decides nothing. Every request outside
// the servers is routed to a failure and listed. For each view: console errors, each chart's
// labels and drawn pixels, and every figure shown (data-src, data-fig, data-value) compared with
// the API's answer at data-src fetched with the same credentials (the list of those that differ).
// Screenshots go to ART.
//   node web_check.js CONFIG.json
// CONFIG: {url, url_none (a server asking every caller for a token), admin_token, nobody_token,
//          serve_pid, serve_cmd, serve_pid_file (the server at url, how to start it again, where
//          to write its new pid), after_job, after_cmd (a job started once it is back),
//          job_a (root's job id), job_k (root's kernel-layer job), job_n (nobody's), live_job (its name), live_cmd (argv starting
//          it), run_job, run_cmd (a job running while the system view is open), art (screenshot
//          directory)}
"use strict";
const fs = require("fs");
const { spawn } = require("child_process");
const { chromium } = require("playwright-core");

const C = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = { outside: [] };
const logs = []; // every context's log, printed when the run fails
const step = (name) => process.stderr.write("step: " + name + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function context(browser, token) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
	if (token) await ctx.addInitScript((t) => sessionStorage.setItem("iostrata.token", t), token);
	const page = await ctx.newPage();
	const log = { console: [], requests: [] };
	logs.push(log);
	page.on("console", (m) => { if (m.type() === "error") log.console.push({ text: m.text(), url: m.location().url }); });
	page.on("pageerror", (e) => log.console.push({ text: String(e), url: "" }));
	page.on("request", (r) => log.requests.push({ url: r.url(), auth: r.headers()["authorization"] || "" }));
	await ctx.route("**/*", (route) => {
		const u = route.request().url();
		if (u.startsWith(C.url + "/") || u.startsWith(C.url_none + "/")) return route.continue();
		out.outside.push(u);
		return route.abort();
	});
	return { ctx, page, log };
}

// A navigation, then the view it leads to: the view's generation (app.js counts the views it
// drew) is noted first, so a view drawn before (the same document keeps it when only the URL's
// fragment changes) is never taken for the new one; a new document has no note.
async function unmark(page) {
	await page.evaluate(() => {
		window.navFrom = window.iostrataUI ? window.iostrataUI.view.gen : -1;
		if (document.body) document.body.removeAttribute("data-rendered");
	}).catch(() => {});
}
async function go(page, url, name) {
	await unmark(page);
	await page.goto(url);
	await waitRendered(page, name);
}
async function clickTo(page, selector, name) {
	await unmark(page);
	await page.click(selector);
	await waitRendered(page, name);
}

async function waitRendered(page, name, ms = 20000) {
	step("wait for the " + name + " view");
	await page.waitForFunction((n) => document.body.dataset.rendered === n &&
		(window.navFrom === undefined || window.iostrataUI.view.gen > window.navFrom), name, { timeout: ms });
}

// Every figure of the page against the API: [{src, path, shown, api}] of those that differ.
async function mismatches(page, token) {
	const figs = await page.evaluate(() => [...document.querySelectorAll("[data-src][data-fig]")]
		.map((e) => ({ src: e.dataset.src, path: e.dataset.fig, value: e.dataset.value })));
	const docs = {}, bad = [];
	for (const f of figs) {
		if (!(f.src in docs)) {
			const r = await fetch(C.url + f.src, { headers: token ? { Authorization: "Bearer " + token } : {} });
			docs[f.src] = await r.json();
		}
		let v = docs[f.src];
		const keys = f.path.split(".");
		for (let k = 0; k < keys.length; k++) {
			if (keys[k] === "length" && k === keys.length - 1 && Array.isArray(v)) { v = v.length; break; }
			v = v === null || v === undefined ? v : v[keys[k]];
		}
		const same = typeof v === "number" ? Number(f.value) === v : typeof v === "string" ? f.value === v : false;
		if (!same) bad.push({ src: f.src, path: f.path, shown: f.value, api: v === undefined ? "undefined" : v });
	}
	return { n: figs.length, bad };
}

async function charts(page) {
	return page.evaluate(() => (window.iostrataCharts || []).map((c) => {
		const [x, y, w, h] = c.plot.map(Math.round);
		const d = c.canvas.getContext("2d").getImageData(x, y, Math.max(1, w), Math.max(1, h)).data;
		let drawn = 0;
		for (let i = 3; i < d.length; i += 4) if (d[i]) drawn++;
		return { title: c.title, xlabel: c.xlabel, ylabel: c.ylabel, drawn };
	}));
}

(async () => {
	const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
		args: ["--no-sandbox", "--no-proxy-server"] });

	// ---- the admin on loopback, without a token ----
	const A = await context(browser, null);
	const p = A.page;
	await go(p, C.url + "/", "jobs");
	await p.evaluate(() => { window.notReloaded = 1; });
	out.list_rows = await p.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	out.list_live = await p.textContent("#live");
	// a job started now appears without a reload, and its row ends
	const t0 = Date.now();
	const child = spawn(C.live_cmd[0], C.live_cmd.slice(1), { stdio: "ignore" });
	let seen = -1;
	while (Date.now() - t0 <= 3000) {
		if (await p.$(`tr[data-job="${C.live_job}"]`)) { seen = Date.now() - t0; break; }
		await sleep(50);
	}
	out.live_appeared_within_3s = seen >= 0;
	out.live_first_state = seen >= 0 ? await p.getAttribute(`tr[data-job="${C.live_job}"]`, "data-state") : "";
	const exited = new Promise((r) => child.on("exit", (code) => r(code)));
	out.live_exit = await exited;
	for (let k = 0; k < 300; k++) {
		if (await p.$(`tr[data-job="${C.live_job}"][data-state="ended"]`)) break;
		await sleep(100);
	}
	out.live_ended_row = await p.$$eval(`tr[data-job="${C.live_job}"]`, (rs) => rs.map((r) => r.dataset.state));
	out.live_no_reload = await p.evaluate(() => window.notReloaded === 1);
	// the row may change again after it ended (the daemon's last writes come as events too):
	// the page follows; compare once it agrees, or after 10 s
	for (let k = 0; k < 50; k++) {
		out.list = await mismatches(p, null);
		if (!out.list.bad.length) break;
		await sleep(200);
	}
	await p.screenshot({ path: C.art + "/web_ui_jobs.png", fullPage: true });

	// filters map to the API: state=running shows none now, app=the live job's program shows it
	await p.selectOption("select[name=state]", "ended");
	await p.fill("input[name=user]", "nobody");
	await clickTo(p, "#filters button[type=submit]", "jobs");
	out.filter_hash = await p.evaluate(() => location.hash);
	out.filter_rows = await p.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	out.filter_figs = await mismatches(p, null);
	await p.selectOption("select[name=state]", "");
	await p.fill("input[name=user]", "");
	await p.fill("input[name=app]", "dd");
	await clickTo(p, "#filters button[type=submit]", "jobs");
	out.filter_app = [await p.evaluate(() => location.hash), await p.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job))];
	await p.fill("input[name=app]", "");
	await p.fill("input[name=since]", "1h");
	await p.fill("input[name=until]", "@1");
	await clickTo(p, "#filters button[type=submit]", "jobs");
	out.filter_until = [await p.evaluate(() => location.hash), await p.$$eval("tr[data-job-id]", (rs) => rs.length),
		await p.textContent("#app [data-fig=total]")];

	// paging: two a page, newest first; "older →" goes back in time
	const all = (await (await fetch(C.url + "/api/v1/jobs")).json()).jobs.map((j) => j.job);
	out.paging_want = [all.slice(-2).reverse(), all.slice(-4, -2).reverse()];
	await go(p, C.url + "/#/?limit=2", "jobs");
	const page0 = await p.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	await clickTo(p, "text=older →", "jobs");
	const page1 = await p.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	out.paging_got = [page0, page1];
	out.paging_figs = await mismatches(p, null);

	// ---- root's job: the application view ----
	await go(p, C.url + "/#/", "jobs");
	await clickTo(p, `tr[data-job-id="${C.job_a}"] a`, "job");
	out.job_hash = await p.evaluate(() => location.hash);
	out.job_charts = await charts(p);
	out.job = await mismatches(p, null);
	out.job_findings = await p.$$eval("[data-finding]", (fs) => fs.map((f) => ({ id: f.dataset.finding, zoom: !!f.querySelector("button.zoom") })));
	await p.screenshot({ path: C.art + "/web_ui_job.png", fullPage: true });
	const rep = await (await fetch(C.url + "/api/v1/jobs/" + C.job_a + "/findings")).json();
	out.api_findings = rep.findings.map((f) => ({ id: f.id, time: f.time }));
	// the finding with the shortest time range of some length: its zoom shows the most change
	let zi = -1;
	rep.findings.forEach((f, i) => {
		const d = f.time ? f.time.end_ns - f.time.start_ns : 0;
		if (d > 0 && (zi < 0 || d < rep.findings[zi].time.end_ns - rep.findings[zi].time.start_ns)) zi = i;
	});
	out.zoom_index = zi;
	if (zi >= 0) {
		await p.click(`button[data-zoom="${zi}"]`);
		out.zoom_want = [rep.findings[zi].time.start_ns / 1e9, rep.findings[zi].time.end_ns / 1e9];
		out.zoom_got = await p.evaluate(() => window.iostrataUI.timeCharts.map((u) => [u.scales.x.min, u.scales.x.max]));
		out.zoom_active = await p.$$eval(".finding.active", (fs) => fs.map((f) => f.dataset.index));
		out.zoom_heat = await p.evaluate(() => {
			const c = window.iostrataUI.heatmap, u = window.iostrataUI.timeCharts[0];
			const xs = u.data[0].filter((x, i) => u.data.slice(1).some((s) => s[i] !== null));
			return { range: c.dataset.range, x0: Number(c.dataset.x0), w: Number(c.dataset.w), xs };
		});
		out.zoom_charts = await charts(p);
		await p.screenshot({ path: C.art + "/web_ui_zoom.png", fullPage: true });
		await p.click("#zoom-reset");
		out.unzoom_heat = await p.evaluate(() => window.iostrataUI.heatmap.dataset.range);
		out.unzoom_got = await p.evaluate(() => window.iostrataUI.timeCharts.map((u) => [u.scales.x.min, u.scales.x.max]));
		out.unzoom_want = await p.evaluate(() => window.iostrataUI.timeCharts.map((u) => [u.data[0][0], u.data[0][u.data[0].length - 1]]));
	}

	// the diagnosis' anomalies: listed, and the zoom of the first lands on its range
	const diag = await (await fetch(C.url + "/api/v1/jobs/" + C.job_a + "/diagnosis")).json();
	const jobA = await (await fetch(C.url + "/api/v1/jobs/" + C.job_a)).json();
	out.api_anomalies = diag.findings.map((f) => f.kind);
	out.anomalies = await p.$$eval("[data-anomaly]", (fs) => fs.map((f) => f.dataset.anomaly));
	if (diag.findings.length) {
		const t0ms = jobA.report.job.start_wall_ns / 1e6, f = diag.findings[0];
		let a = (f.start_ms - t0ms) / 1000, b = (f.end_ms - t0ms) / 1000;
		if (b <= a) { a -= 0.0005; b += 0.0005; }
		out.anomaly_zoom_want = [a, b];
		await p.click('button[data-zoom-anomaly="0"]');
		out.anomaly_zoom_got = await p.evaluate(() => window.iostrataUI.timeCharts.map((u) => [u.scales.x.min, u.scales.x.max]));
		out.anomaly_active = await p.$$eval(".finding.active", (fs) => fs.map((x) => x.dataset.key));
		await p.click("#zoom-reset");
	}
	out.job_after_anomalies = await mismatches(p, null);

	// ---- the kernel-layer job ----
	await go(p, C.url + "/#/job/" + C.job_k, "job");
	out.kjob_charts = await charts(p);
	out.kjob_layers = await p.evaluate(() => window.iostrataUI.timeCharts[0].series.slice(1).map((s) => s.label));
	out.kjob_files = await p.$$eval("#kernel-files tbody tr", (rs) => rs.map((r) => [...r.querySelectorAll("td")].map((d) => {
		const f = d.querySelector("[data-value]");
		return f ? f.dataset.value : d.textContent;
	})));
	out.kjob = await mismatches(p, null);
	await p.screenshot({ path: C.art + "/web_ui_kernel_job.png", fullPage: true });

	// ---- the system view, while a job runs ----
	const run = spawn(C.run_cmd[0], C.run_cmd.slice(1), { stdio: "ignore" });
	const runExit = new Promise((r) => run.on("exit", (code) => r(code)));
	for (let k = 0; k < 100; k++) {
		const j = await (await fetch(C.url + "/api/v1/jobs?state=running")).json();
		if (j.jobs.some((x) => x.job === C.run_job && x.bytes_written > 0)) break;
		await sleep(100);
	}
	await go(p, C.url + "/#/system", "system");
	for (let k = 0; k < 100 && !(await p.$(`#running tr[data-job="${C.run_job}"]`)); k++) await sleep(100);
	out.system_running_rows = await p.$$eval("#running tbody tr", (rs) => rs.map((r) => r.dataset.job));
	out.system_charts = await charts(p);
	// a refresh of the view (a job's event does it at most every 5 s): drawn again, not added
	await p.evaluate(() => { document.body.removeAttribute("data-rendered"); window.iostrataUI.view.refresh(); });
	await p.waitForSelector('body[data-rendered="system"]');
	out.system_charts_refreshed = await charts(p);
	out.system = await mismatches(p, null);
	// the alerts shown against the API's at one moment: a job that ends meanwhile (the running
	// one, whose diagnosis may find something on a slow host) adds to the API first, so read both
	// again, from a reloaded view, until they agree
	const apiAlerts = async () => (await (await fetch(C.url + "/api/v1/alerts?since=1h")).json()).alerts.length;
	for (let k = 0; ; k++) {
		out.system_alerts = await p.$$eval("#alerts tbody tr", (rs) => rs.length);
		out.system_alerts_api = await apiAlerts();
		if (out.system_alerts === out.system_alerts_api || k === 20) break;
		await sleep(500);
		await go(p, C.url + "/#/system", "system");
	}
	await p.screenshot({ path: C.art + "/web_ui_system.png", fullPage: true });
	out.run_exit = await runExit;
	out.admin_console = A.log.console.slice();
	out.admin_api_requests = A.log.requests.filter((r) => r.url.includes("/api/")).length;

	// ---- the server restarts: the stream backs off, comes back, and the list is live again ----
	await go(p, C.url + "/#/", "jobs");
	await p.evaluate(() => { window.notReloaded = 1; });
	const before = A.log.console.length;
	process.kill(C.serve_pid, "SIGTERM");
	for (let k = 0; k < 100 && (await p.textContent("#live")) !== "offline"; k++) await sleep(100);
	out.restart_offline = await p.textContent("#live");
	await sleep(1500); // an attempt or two fails against the closed port
	const sv = spawn(C.serve_cmd[0], C.serve_cmd.slice(1), { stdio: "ignore" });
	sv.unref(); // it outlives this script: the shell test reads it, then stops it
	fs.writeFileSync(C.serve_pid_file, String(sv.pid));
	for (let k = 0; k < 200 && (await p.textContent("#live")) !== "live"; k++) await sleep(100);
	out.restart_live = await p.textContent("#live");
	const later = spawn(C.after_cmd[0], C.after_cmd.slice(1), { stdio: "ignore" });
	const laterExit = new Promise((r) => later.on("exit", (code) => r(code)));
	for (let k = 0; k < 100 && !(await p.$(`tr[data-job="${C.after_job}"]`)); k++) await sleep(100);
	out.restart_job_rows = await p.$$eval(`tr[data-job="${C.after_job}"]`, (rs) => rs.length);
	out.restart_job_exit = await laterExit;
	out.restart_no_reload = await p.evaluate(() => window.notReloaded === 1);
	// what a browser says of a stream cut and of a port that refuses: about the events URL only
	const cut = A.log.console.slice(before);
	out.restart_console = cut.filter((m) => !(m.url === C.url + "/api/v1/events" && /net::ERR_/.test(m.text)));
	out.restart_console_refused = cut.length - out.restart_console.length;

	// ---- nobody, with a token: not root's job, not the system view ----
	const N = await context(browser, C.nobody_token);
	const q = N.page;
	await go(q, C.url + "/", "jobs");
	out.nobody_rows = await q.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	out.nobody_who = await q.textContent("#who");
	out.nobody_list = await mismatches(q, C.nobody_token);
	await go(q, C.url + "/#/job/" + C.job_a, "job");
	out.nobody_other_job = await q.$$eval("[data-error]", (e) => e.map((x) => ({ status: x.dataset.error, text: x.textContent })));
	out.nobody_other_job_charts = await q.evaluate(() => window.iostrataCharts.length);
	const r404 = await fetch(C.url + "/api/v1/jobs/" + C.job_a, { headers: { Authorization: "Bearer " + C.nobody_token } });
	out.nobody_other_job_api = r404.status;
	await go(q, C.url + "/#/job/" + C.job_n, "job");
	out.nobody_own_job = await mismatches(q, C.nobody_token);
	out.nobody_own_job_charts = await charts(q);
	await go(q, C.url + "/#/system", "system");
	out.nobody_system = await q.$$eval("[data-error]", (e) => e.map((x) => ({ status: x.dataset.error, text: x.textContent })));
	out.nobody_system_link_hidden = await q.evaluate(() => document.getElementById("nav-system").hidden);
	await q.screenshot({ path: C.art + "/web_ui_nobody_system.png", fullPage: true });
	const n404 = C.url + "/api/v1/jobs/" + C.job_a + "?report=summary"; // the view asks the summary
	out.nobody_console = N.log.console.filter((m) => !(m.url === n404 && /status of 404/.test(m.text)));
	out.nobody_console_404 = N.log.console.length - out.nobody_console.length;
	out.nobody_requests_without_token = N.log.requests.filter((r) => r.url.includes("/api/") && r.auth !== "Bearer " + C.nobody_token).length;
	out.nobody_cookies = (await N.ctx.cookies()).length;

	// ---- a server that asks everyone for a token: the token form ----
	const L = await context(browser, null);
	const s = L.page;
	await go(s, C.url_none + "/", "login");
	out.login_form = !!(await s.$("#login input[type=password]"));
	await s.fill("#token", C.nobody_token);
	await clickTo(s, "#login button[type=submit]", "jobs");
	out.login_rows = await s.$$eval("tr[data-job-id]", (rs) => rs.map((r) => r.dataset.job));
	out.login_stored = await s.evaluate(() => sessionStorage.getItem("iostrata.token") !== null);
	out.login_cookies = (await L.ctx.cookies()).length;
	await clickTo(s, "#forget", "login");
	out.login_forgotten = await s.evaluate(() => sessionStorage.getItem("iostrata.token") === null);
	// the 401s of the login flow are the answers that ask for a token
	out.login_console = L.log.console.filter((m) => !/status of 401/.test(m.text));

	await browser.close();
	process.stdout.write(JSON.stringify(out) + "\n");
})().catch((e) => {
	process.stderr.write("web_check: " + (e && e.stack || e) + "\n" + JSON.stringify(logs.map((l) => l.console)) + "\n");
	process.exit(1);
});
