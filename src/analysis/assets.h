/* SPDX-License-Identifier: MIT */
/*
 * Files embedded in the binaries at build time (scripts/embed-assets writes the table into
 * build/gen/assets.c): uPlot's script, style sheet and licence, from the pinned npm package the
 * build installs; the HTML report's script and style; charts.js, the drawing the report and the
 * web UI share; the web UI's files (src/web/ui/, named "ui/FILE"). The HTML report inlines
 * them; the web UI serves the same bytes. Nothing here is read from disk or the network at run
 * time.
 */
#ifndef IOSTRATA_ANALYSIS_ASSETS_H
#define IOSTRATA_ANALYSIS_ASSETS_H

#include <stddef.h>
#include <string.h>

struct ana_asset {
	const char *name;          /* "uplot.js", "uplot.css", "uplot.LICENSE", "charts.js", "ui/app.js" ... */
	const unsigned char *data; /* NUL-terminated (the NUL not counted in len) */
	size_t len;
};

extern const struct ana_asset ana_assets[]; /* ends with a row whose name is NULL */

/* The asset called name, or NULL. */
static inline const struct ana_asset *ana_asset_find(const char *name)
{
	for (const struct ana_asset *a = ana_assets; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

#endif
