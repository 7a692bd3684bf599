// SPDX-License-Identifier: MIT
// Opens an HTML report in Debian's Chromium (playwright-core, no browser download) with networking
// disabled and every request routed to a failure, and prints what report_html.sh checks, as JSON:
// console errors, requests attempted, each chart's labels and how many pixels of its plot area are
// drawn, and every figure the page shows (data-fig: its JSON report path, data-value: its value).
// It saves a screenshot. It decides nothing: the shell test compares.
//   node html_check.js PAGE.html SCREENSHOT.png
"use strict";
const fs = require("fs");
const { chromium } = require("playwright-core");

(async () => {
	const [page_path, shot] = process.argv.slice(2);
	const html = fs.readFileSync(page_path, "utf8");
	const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
		args: ["--no-sandbox", "--no-proxy-server"] });
	const ctx = await browser.newContext({ offline: true, viewport: { width: 1280, height: 900 } });
	const page = await ctx.newPage();
	const out = { console_errors: [], requests: [] };
	page.on("console", (m) => { if (m.type() === "error") out.console_errors.push(m.text()); });
	page.on("pageerror", (e) => out.console_errors.push(String(e)));
	page.on("request", (r) => out.requests.push(r.url()));
	await page.route("**/*", (route) => { out.requests.push("routed " + route.request().url()); return route.abort(); });
	// the page as content, not a file:// URL: then any request at all is one the page made
	await page.setContent(html, { waitUntil: "load" });
	Object.assign(out, await page.evaluate(() => {
		const charts = (window.iostrataCharts || []).map((c) => {
			const [x, y, w, h] = c.plot.map(Math.round);
			const d = c.canvas.getContext("2d").getImageData(x, y, Math.max(1, w), Math.max(1, h)).data;
			let drawn = 0;
			for (let i = 3; i < d.length; i += 4) if (d[i]) drawn++;
			return { title: c.title, xlabel: c.xlabel, ylabel: c.ylabel, drawn };
		});
		const figs = [...document.querySelectorAll("[data-fig]")].map((e) => ({ path: e.dataset.fig, value: e.dataset.value }));
		return { rendered: document.body.dataset.rendered || "", charts, figs,
			findings: document.querySelectorAll("[data-finding]").length, title: document.title,
			job_title: document.getElementById("job-title").textContent };
	}));
	await page.screenshot({ path: shot, fullPage: true });
	await browser.close();
	process.stdout.write(JSON.stringify(out) + "\n");
})().catch((e) => { process.stderr.write("html_check: " + e + "\n"); process.exit(1); });
