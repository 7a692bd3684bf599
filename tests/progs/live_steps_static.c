/* SPDX-License-Identifier: MIT */
/* live_steps, linked statically (the Makefile links *_static.c with -static): an image no preload
 * library loads into, for an exec whose new image leaves no log (daemon_exec_kill.sh). */
#include "live_steps.c"
