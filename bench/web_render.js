// SPDX-License-Identifier: MIT
// The web UI's first render (bench/web, WEB_UI_RENDER's default): `node bench/web_render.js URL
// JOB_ID` opens URL/#/job/JOB_ID in a fresh headless Chromium context (Debian's /usr/bin/chromium,
// driven by playwright-core from build/npm-test: NODE_PATH), waits until the application view
// says it has rendered (document.body.dataset.rendered = "job": every chart drawn from the API's
// answers), and prints the time from the navigation's start to then, in microseconds, from the
// page's own clock (performance.now()). A cold context each time: nothing cached.
const { chromium } = require("playwright-core");

(async () => {
	const [url, id] = process.argv.slice(2);
	if (!url || !id) {
		console.error("usage: node bench/web_render.js URL JOB_ID");
		process.exit(2);
	}
	const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
		args: ["--no-sandbox", "--no-proxy-server"] });
	const ctx = await browser.newContext();
	const page = await ctx.newPage();
	await page.goto(url + "/#/job/" + id);
	await page.waitForFunction(() => document.body.dataset.rendered === "job", null, { timeout: 60000 });
	const ms = await page.evaluate(() => performance.now());
	console.log(Math.round(ms * 1000));
	await browser.close();
})().catch((e) => {
	console.error("bench/web_render: " + e.message.split("\n")[0]);
	process.exit(1);
});
